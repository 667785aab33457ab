"""Local addresses across homes: two homes on one machine (two Shoals, or tests in parallel
workers) never give the same loopback address to their servers, also when they take them at
the same instant; an address comes back to the machine when its slot is released or its home
removed."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from shoal.providers.local.slots import SlotTable
from tests.support.ports import free_port


def _address(n: int) -> str:
    return f"127.77.1.{n}"  # a host coordinate no provider under test uses


def test_two_homes_never_share_an_address(tmp_path: Path) -> None:
    claims = tmp_path / "claims"
    a = SlotTable(tmp_path / "a" / "slots", claims)
    b = SlotTable(tmp_path / "b" / "slots", claims)
    port = free_port()
    first = a.take("h", "k1", _address, port)
    second = b.take("h", "k2", _address, port)
    assert first != second
    a.release("h", first, _address(first))
    assert b.take("h", "k3", _address, port) == first  # released: anyone's again
    shutil.rmtree(tmp_path / "b")  # a home removed with its slots: its claims lapse
    c = SlotTable(tmp_path / "c" / "slots", claims)
    assert c.take("h", "k4", _address, port) == first


def test_homes_taking_at_the_same_instant_get_distinct_addresses(tmp_path: Path) -> None:
    claims = tmp_path / "claims"
    tables = [SlotTable(tmp_path / f"home-{i}" / "slots", claims) for i in range(8)]
    port = free_port()
    with ThreadPoolExecutor(len(tables)) as pool:
        slots = list(pool.map(lambda t: t.take("h", "k", _address, port), tables))
    assert len(set(slots)) == len(tables), slots

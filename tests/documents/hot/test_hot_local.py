"""End to end on the local provider: one TripleO-style template, two environments.

`shoal up overcloud.yaml -e common.yaml -e single.yaml` brings up one controller (a server
process with its data volume attached); the same template with `-e ha.yaml` brings up three
controllers on three hosts and two computes. Real processes, real HTTP on loopback.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from tests.cli.conftest import home, local_shoal
from tests.cli.support import Shoal

__all__ = ["home", "local_shoal"]

TRIPLEO = Path(__file__).resolve().parents[2] / "data" / "hot" / "tripleo-style"


def fetch(address: str) -> Any:
    with urllib.request.urlopen(f"http://{address}/", timeout=5) as r:
        assert r.status == 200
        return json.loads(r.read())


def up(shoal: Shoal, env: str) -> list[dict[str, Any]]:
    template = str(TRIPLEO / "overcloud.yaml")
    done = shoal.ok("up", template, "-e", str(TRIPLEO / "common.yaml"), "-e", str(TRIPLEO / env))
    assert "cluster overcloud: ACTIVE" in done.stdout
    nodes: list[dict[str, Any]] = shoal.json("describe", "cluster", "overcloud")["nodes"]
    return nodes


def test_single_and_ha_from_one_template(local_shoal: Shoal) -> None:
    single = up(local_shoal, "single.yaml")
    servers = [n for n in single if n["kind"] == "server"]
    assert [n["name"] for n in servers] == ["Controller-1-server"]
    described = fetch(servers[0]["address"])
    assert len(described["volumes"]) == 1  # its data volume is attached
    local_shoal.ok("delete", "overcloud", "--wait")

    ha = up(local_shoal, "ha.yaml")
    servers = [n for n in ha if n["kind"] == "server"]
    controllers = [n for n in servers if n["name"].startswith("Controller")]
    assert len(controllers) == 3 and len(servers) == 5
    assert len({n["host"] for n in controllers}) == 3  # the HA environment's anti-affinity
    for node in controllers:
        assert len(fetch(node["address"])["volumes"]) == 1
    local_shoal.ok("delete", "overcloud", "--wait")

"""The sim provider's create path built cheaply (issue 23): the same values as the plain way."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import uuid
from pathlib import Path

import pytest

from shoal.model.catalogs import default_inventory
from shoal.model.enums import NodeKind
from shoal.providers.base import Resource, ResourceState
from shoal.providers.sim import SimProvider
from shoal.providers.sim import provider as sim

from .support import server_request


def test_a_new_id_is_a_version_4_uuid_of_its_random_bytes() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        raw = rng.randbytes(16)
        assert sim._new_id(lambda n, raw=raw: raw[:n]) == str(uuid.UUID(bytes=raw, version=4))


async def test_a_created_resource_is_a_plain_frozen_resource(tmp_path: Path) -> None:
    """`_resource` builds a `Resource` without its frozen init: equal to one built normally,
    and as immutable."""
    inventory = default_inventory()
    host = inventory.hosts[0]
    p = SimProvider(inventory, state_path=tmp_path / "sim.db", create_latency_s=0.01)
    try:
        got = await p.create_server(server_request("k1", host.name))
        again = await p.create_server(server_request("k1", host.name))
    finally:
        await p.close()
    assert type(got) is Resource
    expected = Resource(
        id=got.id,
        key="k1",
        kind=NodeKind.SERVER,
        name=got.name,
        state=ResourceState.ACTIVE,
        host=host.name,
        zone=host.zone,
        address=got.address,
        attached_to=None,
        details=dict(got.details),
    )
    assert got == expected and again == expected and hash(got.id) == hash(expected.id)
    assert got.address is not None and got.address.startswith("10.1.1.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.state = ResourceState.ERROR  # type: ignore[misc]
    assert dataclasses.replace(got, state=ResourceState.ERROR).state is ResourceState.ERROR


async def test_a_create_with_the_same_key_waits_for_the_build_in_progress(tmp_path: Path) -> None:
    """A build's event is made by its first waiter: a second create with the key waits for the
    first and answers the same resource."""
    inventory = default_inventory()
    host = inventory.hosts[0].name
    p = SimProvider(inventory, state_path=tmp_path / "sim.db", create_latency_s=0.05)
    try:
        first, second = await asyncio.gather(
            p.create_server(server_request("k1", host)), p.create_server(server_request("k1", host))
        )
    finally:
        await p.close()
    assert first == second and first.state is ResourceState.ACTIVE
    assert p._builds == {}


@pytest.mark.parametrize("turns", [1, 2])
async def test_a_create_cancelled_around_its_reservation_leaves_nothing(
    tmp_path: Path, turns: int
) -> None:
    """Cancelled before its turn's reservations are made (1) or after, before it resumes (2):
    either way the key is not in the books, and a later create makes it afresh."""
    inventory = default_inventory()
    host = inventory.hosts[0].name
    p = SimProvider(inventory, state_path=tmp_path / "sim.db", create_latency_s=0.01)
    try:
        task = asyncio.create_task(p.create_server(server_request("k1", host)))
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert p._state.by_key("server", "k1") is None and p._builds == {}
        made = await p.create_server(server_request("k1", host))
    finally:
        await p.close()
    assert made.state is ResourceState.ACTIVE

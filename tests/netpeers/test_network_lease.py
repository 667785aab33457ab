"""A cluster's networks made once across engines (engine/netlease.py), against the real Neutron
of peers.py: two engines sharing one database (each its own provider instance, so the driver's
per-process lock cannot help, and its own owner id) create a new cluster's servers at the same
moment, each as the engine does (`ServerPorts.of`, then the provider's create, which makes the
server's ports and, first, the networks they need)."""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import select

from shoal.clock import Clock, SystemClock
from shoal.documents import load_cluster
from shoal.engine.context import EngineContext
from shoal.engine.netlease import NetworkLease, lease_name
from shoal.engine.networks import ServerPorts
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionKind, ActionStatus, NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand
from shoal.model.profile import ServerProfile
from shoal.providers.base import ServerRequest
from shoal.providers.openstack.options import OpenStackOptions
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.registry import make_provider
from shoal.store import clusters as cluster_repo
from shoal.store import leases
from shoal.store import nodes as node_repo
from shoal.store.database import Connection, Database
from shoal.store.records import ActionRecord, NewNode
from shoal.store.tables import leases as table
from tests.engine.test_network_lease import Attempts, Sleeps
from tests.netpeers.books import Books, books
from tests.netpeers.peers import NetCloud
from tests.netpeers.test_openstack_networks import PORTS, StubNova, _Cloud

SERVERS = 3
"""Per engine: each engine's creates also race each other (its own lock's part)."""


def held(c: str, cloud: NetCloud) -> Books:
    return books(c, cloud.neutron.url, cloud.octavia.url)


@dataclass
class Engine:
    """What of an engine a server's create goes through: its owner, its provider, its ports."""

    provider: OpenStackProvider
    ports: ServerPorts
    nova: StubNova


@pytest.fixture
async def engines(netcloud: NetCloud, tmp_path: Path) -> AsyncIterator[Callable[..., Engine]]:
    made: list[OpenStackProvider] = []

    def engine(db: Database, owner: str, clock: Clock | None = None) -> Engine:
        base = make_provider(
            "openstack", home=tmp_path / owner, options=netcloud.provider_options()
        )
        assert isinstance(base, OpenStackProvider)
        nova, real = StubNova(), base._conn()
        p = OpenStackProvider(
            lambda: _Cloud(real, nova), OpenStackOptions(mode="tenant", poll_interval_s=0.01)
        )
        made.extend((base, p))

        async def inventory() -> Inventory:
            return default_inventory()

        ctx = EngineContext(
            db, p, clock or SystemClock(), owner, inventory, inventory, lambda: None
        )
        return Engine(p, ServerPorts(ctx), nova)

    try:
        yield engine
    finally:
        for p in made:
            await p.close()


def new_cluster(db: Database, names: list[str]) -> tuple[str, str, dict[str, str]]:
    """A cluster with the PORTS document and server nodes `names` (group web) in the store:
    its id, its create action's id, and node name -> node id."""
    c, action, now = uuid.uuid4().hex[:12], uuid.uuid4().hex, time.time()
    nodes = {name: uuid.uuid4().hex for name in names}
    with db.transaction() as conn:
        cluster_repo.insert_cluster(
            conn,
            id=c,
            project_id="p",
            name=f"os-ports-{c}",
            document=yaml.safe_load(PORTS),
            source_format="native",
            now=now,
        )
        node_repo.insert_nodes(
            conn,
            [
                NewNode(
                    nid,
                    "p",
                    name,
                    NodeKind.SERVER,
                    NodeStatus.CREATING,
                    None,
                    None,
                    {},
                    Demand(),
                    now,
                    now,
                    cluster_id=c,
                    group_name="web",
                )
                for name, nid in nodes.items()
            ],
        )
    return c, action, nodes


def node_create(c: str, parent: str, node: str) -> ActionRecord:
    profile = {"type": "server"}
    return ActionRecord(
        uuid.uuid4().hex,
        "p",
        c,
        node,
        parent,
        ActionKind.NODE_CREATE,
        ActionStatus.RUNNING,
        "",
        {"profile": profile},
        {},
        None,
        None,
        1,
        0,
        False,
        time.time(),
        None,
        None,
    )


async def create(e: Engine, c: str, parent: str, name: str, node: str) -> None:
    """A server's create as the engine runs it: its networking from `ServerPorts.of`, then the
    provider's create (its ports, and before them the cluster's networks)."""
    inventory = default_inventory()
    net = await e.ports.of(node_create(c, parent, node), inventory)
    assert net is not None
    await e.provider.create_server(
        ServerRequest(node, f"os-ports-{name}", c, "", "nova", _profile(), networking=net)
    )


@functools.cache
def _profile() -> ServerProfile:
    found = load_cluster(PORTS, default_inventory()).node_groups[0].parts[0].profile
    assert isinstance(found, ServerProfile)
    return found


async def test_two_engines_creating_a_new_clusters_servers_make_its_networks_once(
    db: Database, engines: Callable[..., Engine], netcloud: NetCloud
) -> None:
    a, b = engines(db, "engine-a"), engines(db, "engine-b")
    names = [f"web-{i}" for i in range(1, 2 * SERVERS + 1)]
    c, parent, nodes = new_cluster(db, names)
    # Each engine was handed half the cluster's creates, all starting together.
    await asyncio.gather(
        *(create(a if i % 2 else b, c, parent, n, nodes[n]) for i, n in enumerate(names))
    )
    made = held(c, netcloud)
    assert made.by_kind == {
        "networks": 1,
        "subnets": 1,
        "routers": 1,
        "security-groups": 1,
        "ports": 2 * SERVERS,
        "floatingips": 1,
    }, made
    assert (made.duplicates, made.unkeyed) == (0, 0), made
    assert len(a.nova.boots) == len(b.nova.boots) == SERVERS
    with db.reading() as conn:  # released and dropped: no row per cluster left behind
        assert not leases_named(conn, lease_name(c))
    await a.provider.networking.remove(c)


def leases_named(conn: Connection, name: str) -> list[Any]:
    return list(conn.execute(select(table.c.holder).where(table.c.name == name)).all())


async def test_a_dead_engines_networks_lease_is_taken_over_after_its_ttl_and_prepared_once(
    db: Database, engines: Callable[..., Engine], netcloud: NetCloud
) -> None:
    clock = Sleeps()
    ttl = 30.0
    c, parent, nodes = new_cluster(db, ["web-1"])
    # An engine took the lease and died before making anything (no renewal, no release).
    assert leases.acquire(db, lease_name(c), "dead-engine", clock.now(), ttl)
    e = engines(db, "engine-b", clock)
    attempts = Attempts()
    e.ports._lease = NetworkLease(db, "engine-b", clock, ttl_s=ttl, run_in_thread=attempts)
    creating = asyncio.create_task(create(e, c, parent, "web-1", nodes["web-1"]))

    waited = 0.0
    assert await attempts.answers.get() is False  # held by the dead engine
    while True:
        assert await clock.sleeping.get() == e.ports._lease.poll_s
        clock.advance(e.ports._lease.poll_s)
        waited += e.ports._lease.poll_s
        answer = await attempts.answers.get()
        if answer is not False:
            break
        if waited % 10 == 0:
            assert not held(c, netcloud).resources  # nothing made while the dead lease runs
    assert answer is True and waited > ttl  # taken over once it ran out, not before
    await creating
    made = held(c, netcloud)
    assert made.by_kind["networks"] == made.by_kind["security-groups"] == 1, made
    assert made.duplicates == 0, made
    await e.provider.networking.remove(c)

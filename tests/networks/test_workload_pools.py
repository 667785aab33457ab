"""Pools over workloads in the engine (issue 22): `NetworkSync` reads the replica rows the
workload keeper writes (SQLite and PostgreSQL) and hands the driver the ready ones, on the
workload's port; a replica that stops being ready changes what the driver is given at the next
sync, and nothing changed applies nothing."""

from __future__ import annotations

from typing import cast

from shoal.documents import load_cluster
from shoal.engine.networks import NetworkSync
from shoal.model.catalogs import default_inventory
from shoal.model.outputs import NetworkFact
from shoal.providers.base import Provider
from shoal.providers.networking import BalancerState, ClusterNetworks
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord
from shoal.store.workloads import ReplicaRow
from tests.networks.support import server_node
from tests.support.records import cluster_record

DOC = """
name: svc
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 2}
networks:
  - {name: app, cidr: 10.10.0.0/24}
workloads:
  api:
    replicas: 2
    containers: [{name: api, image: img, ports: [{port: 8080, name: http}]}]
load_balancers:
  - name: front
    network: app
    listeners: [{port: 80, pool: api}]
    pools: [{name: api, members: api}]
"""


class _Driver:
    """A network driver that records what it was asked to apply."""

    def __init__(self) -> None:
        self.applied: list[ClusterNetworks] = []
        self.removed: list[str] = []

    async def apply(self, cluster: ClusterNetworks) -> None:
        self.applied.append(cluster)

    async def remove(self, cluster_id: str) -> None:
        self.removed.append(cluster_id)

    async def clusters(self) -> set[str]:
        return set()

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        return ()

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        return {}


class _Provider:
    def __init__(self) -> None:
        self.networking = _Driver()


def _cluster(cid: str) -> ClusterRecord:
    return cluster_record(cid)


async def test_the_driver_gets_the_ready_replicas(db: Database) -> None:
    spec = load_cluster(DOC, default_inventory())
    nodes = [server_node("web-1", "10.10.0.5"), server_node("web-2", "10.10.0.6")]
    provider = _Provider()
    sync = NetworkSync(cast(Provider, provider), db=db)
    cluster = _cluster("c-pools")

    def write(ready: set[str]) -> None:
        rows = [
            ReplicaRow(cluster.id, r, "api", n, r in ready)
            for r, n in (("api-1", "web-1"), ("api-2", "web-2"))
        ]
        with db.transaction() as conn:
            replica_repo.save(conn, rows, 0.0)

    write({"api-1", "api-2"})
    assert await sync.sync(cluster, spec, nodes, 0.0) is None
    given = provider.networking.applied[-1]
    pool = given.spec.load_balancers[0].pools[0]
    assert pool.member_port == 8080
    assert [(s.name, s.address) for s in given.members("api")] == [
        ("api-1", "10.10.0.5"),
        ("api-2", "10.10.0.6"),
    ]
    assert [s.name for s in given.servers] == ["web-1", "web-2"]  # replicas are no servers

    write({"api-2"})  # api-1 not ready: out of the pool at the next sync
    await sync.sync(cluster, spec, nodes, 1.0)
    assert len(provider.networking.applied) == 2
    assert [s.name for s in provider.networking.applied[-1].members("api")] == ["api-2"]

    await sync.sync(cluster, spec, nodes, 2.0)  # unchanged: nothing applied again
    assert len(provider.networking.applied) == 2


async def test_a_deleted_clusters_networking_goes_on_the_next_tick_not_the_next_listing(
    db: Database,
) -> None:
    spec = load_cluster(DOC, default_inventory())
    nodes = [server_node("web-1", "10.10.0.5"), server_node("web-2", "10.10.0.6")]
    provider = _Provider()
    sync = NetworkSync(cast(Provider, provider), full_s=30.0, db=db)
    mine, theirs = _cluster("c-mine"), _cluster("c-theirs")
    await sync.sync(mine, spec, nodes, 0.0)
    await sync.sync(theirs, spec, nodes, 0.0)
    await sync.forget({mine.id, theirs.id}, lambda c: True, 0.0)  # the first listing
    assert provider.networking.removed == []
    # Both deleted 1 s later, well inside `full_s`: this engine's goes at once; another
    # partition's is left to its owner.
    await sync.forget(set(), lambda c: c == mine.id, 1.0)
    assert provider.networking.removed == [mine.id]
    await sync.forget(set(), lambda c: c == mine.id, 2.0)  # not removed twice
    assert provider.networking.removed == [mine.id]

"""Cloud-assigned addresses (issue 26): migration 0014 makes exactly the table the store uses,
the engine's sync records what an `AddressSource` driver reports, and outputs resolve to it
instead of `pending` (served by `GET /v1/clusters/{ref}`)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from shoal.clock import ManualClock
from shoal.documents import load_cluster
from shoal.engine.networks import NetworkSync
from shoal.model.catalogs import default_inventory
from shoal.model.outputs import NetAttr, NetworkFact
from shoal.providers.networking import BalancerState, ClusterNetworks
from shoal.service.clusters import ClusterService
from shoal.service.queries import Queries
from shoal.store import clusters as cluster_repo
from shoal.store import network_addresses as repo
from shoal.store.database import Database
from shoal.store.tables import metadata, network_addresses
from tests.engine.support import ADMIN

DOC = """
name: addr
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
networks:
  - {name: app, cidr: 10.80.0.0/24}
load_balancers:
  - name: front
    network: app
    listeners: [{port: 80, pool: web}]
    pools: [{name: web, members: web, port: 8080}]
outputs:
  vip: {value: {network_address: front, of: load_balancer}}
"""

VIP = NetworkFact(NetAttr.VIP_ADDRESS, "front")


class Cloud:
    """A driver that assigns the VIP, as Octavia does."""

    def __init__(self) -> None:
        self.vip: str | None = None
        self.networking = self

    async def apply(self, cluster: ClusterNetworks) -> None:
        self.vip = "198.51.100.7"

    async def remove(self, cluster_id: str) -> None:
        self.vip = None

    async def clusters(self) -> set[str]:
        return set()

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        return ()

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        return {VIP: self.vip} if self.vip else {}


async def test_an_assigned_vip_is_recorded_and_resolves_the_output(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert [d for d in diff if network_addresses.name in repr(d)] == []
    inv = default_inventory()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    cid = service.create(ADMIN, DOC).cluster.id
    queries = Queries(db, lambda: inv)

    def output() -> dict[str, object]:
        (out,) = queries.cluster(ADMIN, cid).outputs
        return out.model_dump(mode="json")

    assert output()["status"] == "pending"
    sync = NetworkSync(Cloud(), db=db)  # type: ignore[arg-type]
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cid)
    assert cluster is not None
    spec = load_cluster(DOC, inv)
    assert await sync.sync(cluster, spec, [], 1.0) is None
    with db.reading() as conn:
        assert repo.for_cluster(conn, cid) == {VIP: "198.51.100.7"}
    got = output()
    assert (got["status"], got["value"]) == ("ready", "198.51.100.7")

"""Pools over workloads in Heat templates (issue 22's gaps, item 2): an `OS::Octavia::PoolMember`
whose `address` is a `get_attr` of a `Shoal::Workload` makes its pool serve the workload's
ready replicas, as the native `members: WORKLOAD` does. The template reads into that model and
plans (replicas → nodes); a wrong port is refused at the PoolMember's pool; and on `sim` (a
ManualClock, SQLite and PostgreSQL) the engine hands the network driver the ready replicas,
and a replica whose container exits leaves the pool until it is restarted."""

from __future__ import annotations

import asyncio
import json

import pytest

from shoal.clock import ManualClock
from shoal.documents import load_cluster
from shoal.documents.export import to_document
from shoal.engine.workloads import replica_key
from shoal.model import InvalidDocument
from shoal.model.catalogs import default_inventory, synthetic_inventory
from shoal.model.members import MemberRef
from shoal.model.outputs import NetworkFact
from shoal.placement import solve
from shoal.providers.networking import BalancerState, ClusterNetworks
from shoal.providers.sim.provider import SimProvider
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.workloads.support import rig_for, rows, settled

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.60.0.0/24}
  ctl:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      resource_def:
        type: OS::Nova::Server
        properties: {flavor: m1.small, image: cirros, networks: [{network: {get_resource: net}}]}
  api:
    type: Shoal::Workload
    properties:
      replicas: 2
      nodes: {groups: [ctl]}
      rules: [{rule: anti-affinity, scope: node}]
      containers: [{name: api, image: img, ports: [{port: 8080, name: http}, 9090]}]
  lb:
    type: OS::Octavia::LoadBalancer
    properties: {vip_subnet: {get_resource: subnet}}
  listener:
    type: OS::Octavia::Listener
    properties: {loadbalancer: {get_resource: lb}, protocol: HTTP, protocol_port: 80}
  pool:
    type: OS::Octavia::Pool
    properties: {listener: {get_resource: listener}, lb_algorithm: ROUND_ROBIN, protocol: HTTP}
  member:
    type: OS::Octavia::PoolMember
    properties:
      pool: {get_resource: pool}
      address: {get_attr: [api, first_address]}
      protocol_port: 8080
      subnet: {get_resource: subnet}
"""


def test_a_pool_member_naming_a_workload_reads_and_plans() -> None:
    inventory = default_inventory()
    spec = load_cluster(TEMPLATE, inventory)
    (lb,) = spec.networking.load_balancers
    pool = lb.pool("pool")
    assert pool is not None and pool.members == MemberRef("api") and pool.member_port == 8080
    # The same model as a native document's `members: api` (stored as one, read back equal).
    assert load_cluster(json.dumps(to_document(spec)), inventory) == spec
    result = solve(spec, inventory)
    assert result.feasible
    placed = result.as_dict()["replicas"]
    assert sorted(r["replica"] for r in placed) == ["api-1", "api-2"]
    assert len({r["node"] for r in placed}) == 2  # anti-affine by node


@pytest.mark.parametrize(
    ("before", "after", "where", "says"),
    [
        (
            "protocol_port: 8080",
            "protocol_port: 7070",
            "/resources/member/properties/protocol_port",
            "8080, 9090",
        ),
        (
            "address: {get_attr: [api, first_address]}",
            "address: {get_attr: [nope, first_address]}",
            "/resources/member/properties/address/get_attr/0",
            "unknown resource 'nope'",
        ),
    ],
)
def test_a_workload_pool_problem_points_at_the_template(
    before: str, after: str, where: str, says: str
) -> None:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(TEMPLATE.replace(before, after), default_inventory())
    found = [(p.path, p.message) for p in caught.value.problems]
    assert any(path == where and says in message for path, message in found), found


class _Driver:
    """A network driver that records what it was asked to apply (sim has none of its own)."""

    def __init__(self) -> None:
        self.applied: list[ClusterNetworks] = []

    async def apply(self, cluster: ClusterNetworks) -> None:
        self.applied.append(cluster)

    async def remove(self, cluster_id: str) -> None:
        return None

    async def clusters(self) -> set[str]:
        return {c.cluster_id for c in self.applied}

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        return ()

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        return {}


async def test_the_pool_follows_the_workloads_ready_replicas_on_sim(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    driver = _Driver()
    provider.networking = driver  # type: ignore[attr-defined]
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, TEMPLATE)
        cid = sub.cluster.id

        def served() -> list[tuple[str, str, int | None]]:
            if not driver.applied:
                return []
            last = driver.applied[-1]
            port = last.spec.load_balancers[0].pools[0].member_port
            return [(s.name, s.address, port) for s in last.members("api")]

        def expected() -> list[tuple[str, str, int | None]]:
            with db.reading() as conn:
                address = {n.name: n.address for n in node_repo.list_nodes(conn, cid)}
            return sorted(
                (x, str(address.get(r.node)).split(":")[0], 8080)
                for x, r in rows(db, cid).items()
                if r.ready
            )

        await until(
            lambda: (
                settled(db, cid)
                and len(rows(db, cid)) == 2
                and all(r.ready for r in rows(db, cid).values())
                and served() == expected()
            ),
            clock=clock,
        )
        assert [x for x, _, _ in served()] == ["api-1", "api-2"]
        assert all(a for _, a, _ in served())
        # Replicas are pool members only, never servers of the cluster's networking.
        assert {s.name for s in driver.applied[-1].servers} == {"ctl-1", "ctl-2", "ctl-3"}

        # api-2's container exits twice in a row (the first is restarted at once): out of the
        # pool for its back-off; back in once the keeper restarts it.
        provider.replicas.kill(replica_key(cid, "api-2"))
        await until(lambda: rows(db, cid)["api-2"].restarts == 1, clock=clock, step_s=0.05)
        provider.replicas.kill(replica_key(cid, "api-2"))
        await until(lambda: [x for x, _, _ in served()] == ["api-1"], clock=clock, step_s=0.2)
        await until(lambda: [x for x, _, _ in served()] == ["api-1", "api-2"], clock=clock)
    finally:
        await rig.engine.stop()

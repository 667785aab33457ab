"""Deployments' inputs take the addresses of the cluster's own networking (issue 26): one the
document gives is a literal at once; one the cloud assigns holds the deployment (and what
depends on it) until the engine recorded it in `network_addresses`, then runs with it. On the
sim provider, the row written through the store as the networking sync would, on SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import json

import pytest

from shoal.clock import ManualClock
from shoal.documents import load_cluster
from shoal.documents.export import to_document
from shoal.model import InvalidDocument
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionStatus
from shoal.model.members import MemberRef
from shoal.model.outputs import NetAttr, NetworkFact
from shoal.model.software import (
    ConfigInput,
    DeployAction,
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    HookGroup,
    NodeFacts,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.planning.software import plan, removals
from shoal.providers.sim.provider import SimProvider
from shoal.store import network_addresses as address_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, decided_at, make_rig
from tests.engine.test_deployments import rows, runs_of
from tests.support.polling import until

DOC = """
name: addr
node_groups:
  - {name: web, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 1}
networks:
  - {name: app, cidr: 10.80.0.0/24}
ports:
  - {name: wp, server: web, network: app}
load_balancers:
  - name: front
    network: app
    vip: 10.80.0.100
    listeners: [{port: 80, pool: web}]
    pools: [{name: web, members: web, port: 8080}]
software:
  configs:
    cfg: {group: script, config: "echo", inputs: [me, vip]}
  deployments:
    first:
      config: cfg
      target: web
      inputs:
        me: {network_address: wp, of: port}
        vip: {network_address: front, of: load_balancer}
    then: {config: cfg, target: web, depends_on: [first]}
    known:
      config: cfg
      target: web
      inputs: {vip: {network_address: front, of: load_balancer}}
"""

PORT = NetworkFact(NetAttr.PORT_ADDRESS, "wp")


async def test_a_deployment_waits_for_the_recorded_address_then_takes_it(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(default_inventory(), clock_sleep=clock.sleep)
    rig = make_rig(db, provider=provider, clock=clock, lease_s=60.0)
    rig.engine.deployer.tick_s = 0.02
    rig.engine.manager = None  # nothing here needs health management
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        done = await rig.wait(sub.action.id)
        assert done.status is ActionStatus.SUCCEEDED, done.status_reason
        cid = sub.cluster.id

        def complete(name: str) -> bool:
            r = rows(rig, cid).get((name, "web-1"))
            return r is not None and r.status is DeploymentStatus.COMPLETE

        # The address the document gives is known at once; the one the cloud assigns is not.
        await until(lambda: complete("known"), lambda: f"not run: {rows(rig, cid)}")
        clock.advance(5)
        rig.engine.deployer.wake()
        await decided_at(rig, clock.now())
        assert set(rows(rig, cid)) == {("known", "web-1")}
        assert [r.deployment for r in runs_of(rig).runs] == ["known"]
        assert runs_of(rig).runs[0].inputs["vip"] == "10.80.0.100"

        # Recorded (as the networking sync does after Neutron said): the next pass runs it,
        # then what depends on it.
        def record() -> None:
            with db.transaction() as conn:
                address_repo.replace_for(conn, cid, {PORT: "10.80.0.33"}, clock.now())

        await asyncio.to_thread(record)
        clock.advance(5)
        rig.engine.deployer.wake()
        await until(lambda: complete("then"), lambda: f"not run: {rows(rig, cid)}")
        (first,) = [r for r in runs_of(rig).runs if r.deployment == "first"]
        assert dict(first.inputs) == {"me": "10.80.0.33", "vip": "10.80.0.100"}
    finally:
        await rig.engine.stop()


def test_the_native_form_round_trips_and_names_the_clusters_own() -> None:
    inv = default_inventory()
    spec = load_cluster(DOC, inv)
    d = spec.software.deployment("first")
    assert d is not None and d.inputs["me"] == PORT
    assert load_cluster(json.dumps(to_document(spec)), inv) == spec
    bad = DOC.replace("{network_address: wp, of: port}", "{network_address: nope, of: port}")
    bad = bad.replace("inputs: {vip: {network_address: front", "inputs: {vip: {network_address: x")
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(bad, inv)
    problems = {p.path: p.message for p in caught.value.problems}
    assert "nope" in problems["/software/deployments/first/inputs/me/network_address"], problems
    assert "x" in problems["/software/deployments/known/inputs/vip/network_address"]


def test_the_resolver_holds_until_known_then_updates_when_it_moves() -> None:
    """Pure (planning/software.py): not due and holding dependents while unknown; due with the
    address once known; a moved address is a new digest (an UPDATE); a DELETE takes it too."""
    cfg = SoftwareConfig("cfg", HookGroup.SCRIPT, "echo", inputs=(ConfigInput("me"),))
    first = Deployment(
        "first", "cfg", MemberRef("web"), inputs={"me": PORT}, actions=frozenset(DeployAction)
    )
    then = Deployment("then", "cfg", MemberRef("web"), depends_on=("first",))
    sw = SoftwareSpec(configs=(cfg,), deployments=(first, then))
    node = NodeFacts("web-1", MemberRef("web"), 1, "10.0.0.1", None, None, True)
    assert plan(sw, [node], []).due == ()
    (run,) = plan(sw, [node], [], {PORT: "10.80.0.33"}).due
    assert (run.deployment, run.inputs["me"]) == ("first", "10.80.0.33")
    done = DeploymentRecord("first", "web-1", DeploymentStatus.COMPLETE, run.digest)
    (after,) = plan(sw, [node], [done], {PORT: "10.80.0.33"}).due
    assert after.deployment == "then"
    (moved,) = plan(sw, [node], [done], {PORT: "10.80.0.34"}).due  # `then` waits for it
    assert (moved.action, moved.inputs["me"]) == (DeployAction.UPDATE, "10.80.0.34")
    (delete,) = removals(sw, [node], [done], {PORT: "10.80.0.33"})
    assert (delete.action, delete.inputs["me"]) == (DeployAction.DELETE, "10.80.0.33")

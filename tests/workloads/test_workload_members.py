"""`{members: WORKLOAD}` gated by readiness (issue 22, item 1), on `sim` with a ManualClock on
SQLite and PostgreSQL: a deployment's input, a cluster output and another workload's env list
the ready replicas of `db` as `ADDRESS:PORT` (its named port); when a replica's container
exits (not ready during its back-off) the deployment runs again on its server with one
address, the output lists one, and the workload whose env reads them rolls to a new revision;
when it is ready again, all follow once more (web back on its first revision: the same values
render the same revision)."""

from __future__ import annotations

import asyncio

from shoal.clock import ManualClock
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.model.software import DeployAction, DeploymentStatus
from shoal.providers.sim.provider import SimProvider
from shoal.service.queries import Queries
from shoal.store import deployments as deployment_repo
from shoal.store import nodes as node_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store.database import Database
from shoal.store.deployments import DeploymentRow
from tests.engine.support import ADMIN, Rig
from tests.support.polling import until
from tests.workloads.support import events, rig_for, rows, settled

DOC = """
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 3
software:
  configs:
    lb:
      group: script
      config: "#!/bin/sh\\necho ok"
      inputs: [{name: backends, type: Json}]
  deployments:
    balancer:
      config: lb
      target: ctl
      inputs: {backends: {members: db}}
      actions: [CREATE, UPDATE]
workloads:
  db:
    replicas: 2
    containers:
      - name: db
        image: img
        ports: [9000, {port: 5432, name: pg}]
        resources: {cpu: 0.25}
  web:
    replicas: 1
    containers:
      - name: web
        image: img
        env: {DB: {members: db}}
        resources: {cpu: 0.25}
outputs:
  databases: {value: {members: db}}
"""


def _balancer(db: Database, cid: str) -> list[DeploymentRow]:
    with db.reading() as conn:
        return [r for r in deployment_repo.for_cluster(conn, cid) if r.name == "balancer"]


def _backends(db: Database, cid: str) -> set[tuple[str, ...]] | None:
    """The balancer's inputs on every server, once each run is COMPLETE (None before)."""
    found = _balancer(db, cid)
    if len(found) != 3 or any(r.status is not DeploymentStatus.COMPLETE for r in found):
        return None
    return {tuple(str(x) for x in r.inputs["backends"]) for r in found}  # type: ignore[union-attr]


def _output(rig: Rig, cluster: str) -> object:
    """The cluster output `databases` as `GET /v1/clusters/{ref}` serves it."""
    view = Queries(rig.db, lambda: rig.inventory).cluster(ADMIN, cluster)
    return next(o.value for o in view.outputs if o.name == "databases")


def _web_revision(db: Database, cid: str) -> str:
    with db.reading() as conn:
        found = {r.workload: r for r in rollout_repo.of_cluster(conn, cid)}
    return found["web"].target.revision


async def test_members_of_a_workload_follow_its_ready_replicas(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        cid = sub.cluster.id
        await until(lambda: len(rows(db, cid)) == 3 and settled(db, cid), clock=clock)
        await until(lambda: all(r.ready for r in rows(db, cid).values()), clock=clock)
        with db.reading() as conn:
            address = {n.name: n.address for n in node_repo.list_nodes(conn, cid)}
        both = tuple(sorted(f"{address[rows(db, cid)[x].node]}:5432" for x in ("db-1", "db-2")))
        await until(lambda: _backends(db, cid) == {both}, clock=clock)
        assert _output(rig, "svc") == list(both)
        # web was first rendered before db's replicas were ready: wait for its rollout to the
        # revision rendered with both members (the keeper's next ticks), not the one before.
        seen_both = clock.now()

        def web_settled_on_both() -> bool:
            target = _web_revision(db, cid)
            told = events(db, cid)
            rolled = any(f"to {target} (the ready members of db changed)" in e for e in told)
            done = not any("rolling update from" in e for e in told) or any(
                f"rolling update to revision {target} complete" in e for e in told
            )
            return (
                (rolled or clock.now() - seen_both >= 20)
                and done
                and rows(db, cid)["web-1"].revision == target
            )

        await until(web_settled_on_both, clock=clock)
        first = _web_revision(db, cid)

        # db-1's container exits twice in a row (the first is restarted at once): not ready
        # for its 10 s back-off.
        provider.replicas.kill(replica_key(cid, "db-1"))
        await until(lambda: rows(db, cid)["db-1"].restarts == 1, clock=clock, step_s=0.05)
        provider.replicas.kill(replica_key(cid, "db-1"))
        one = (f"{address[rows(db, cid)['db-2'].node]}:5432",)
        await until(lambda: not rows(db, cid)["db-1"].ready, clock=clock, step_s=0.2)
        await until(lambda: _backends(db, cid) == {one}, clock=clock, step_s=0.05)
        assert _output(rig, "svc") == list(one)
        assert all(r.action is DeployAction.UPDATE for r in _balancer(db, cid))
        await until(lambda: _web_revision(db, cid) != first, clock=clock, step_s=0.05)
        assert any("ready members of db changed" in t for t in events(db, cid))

        # Ready again after the back-off: the balancer lists both, and web rolls back to the
        # revision it had with both (the same values render the same revision).
        await until(lambda: rows(db, cid)["db-1"].ready, clock=clock)
        await until(lambda: _backends(db, cid) == {both}, clock=clock)
        await until(lambda: rows(db, cid)["web-1"].revision == first, clock=clock, step_s=0.2)
        assert rows(db, cid)["web-1"].ready
    finally:
        await rig.engine.stop()

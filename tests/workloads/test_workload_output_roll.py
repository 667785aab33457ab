"""A deployment's output that a workload's env reads rolls the workload (issue 22's gaps, item
1), on `sim` with a ManualClock on SQLite and PostgreSQL: the output changes (the deployment
runs again after a document edit and reports a new value) → a rolling update in batches of
`max_unavailable` → COMPLETE, every replica started with the new value on its own server; the
workload is not rolled while the deployment's run is in flight, and a steady output rolls
nothing."""

from __future__ import annotations

import asyncio

from shoal.clock import ManualClock
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.model.workload_rollouts import WorkloadPhase
from shoal.providers.sim.provider import SimProvider
from shoal.providers.sim.software import simulated_output
from shoal.store import workload_rollouts as rollout_repo
from shoal.store.database import Database
from shoal.store.workload_rollouts import RolloutRow
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.workloads.support import events, rig_for, rows, settled

DOC = """
name: outs
parameters:
  version: {type: string, default: "VERSION"}
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 3
software:
  configs:
    seed:
      group: script
      config: "#!/bin/sh\\necho ok"
      inputs: [version]
      outputs: [{name: url}]
  deployments:
    seed: {config: seed, target: ctl, inputs: {version: {param: version}}}
workloads:
  web:
    replicas: 3
    containers:
      - name: web
        image: img
        env:
          URL: {output: seed.url}
          ALL: {output: seed.url, from: all}
    rules: [{rule: anti-affinity, scope: node}]
    update: {max_unavailable: 1, max_surge: 0}
    depends_on: [seed]
"""


def _rollout(db: Database, cid: str) -> RolloutRow | None:
    with db.reading() as conn:
        found = rollout_repo.of_cluster(conn, cid)
    return found[0] if found else None


async def test_a_changed_output_rolls_the_workload(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    assert provider.deployments is not None
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC.replace("VERSION", "1"))
        cid = sub.cluster.id

        def url(replica: str) -> str | None:
            return provider.replicas.env_of(replica_key(cid, replica)).get("web", {}).get("URL")

        await until(
            lambda: (
                len(rows(db, cid)) == 3
                and settled(db, cid)
                and all(r.ready for r in rows(db, cid).values())
            ),
            clock=clock,
        )
        first = _rollout(db, cid)
        assert first is not None and first.phase is WorkloadPhase.COMPLETE
        r1 = first.target.revision
        for x, row in rows(db, cid).items():
            assert url(x) == simulated_output("seed", "url", row.node)
        nodes = {x: r.node for x, r in rows(db, cid).items()}
        starts = provider.replicas.starts

        # Ticks with nothing changed roll nothing (the output's digest is stable).
        for _ in range(5):
            clock.advance(1.0)
            await asyncio.sleep(0.02)
        steady = _rollout(db, cid)
        assert steady is not None and steady.target.revision == r1
        assert provider.replicas.starts == starts

        # The deployment runs again (its input changed) and reports a new url: web rolls, one
        # replica at a time, each on its own server, and every replica sees the new value.
        provider.deployments.outputs[("seed", "url")] = "http://new"
        await asyncio.to_thread(rig.service.update, ADMIN, "outs", DOC.replace("VERSION", "2"))

        def rolled() -> bool:
            r = _rollout(db, cid)
            return r is not None and r.phase is WorkloadPhase.COMPLETE and r.target.revision != r1

        await until(lambda: rolled() and all(r.ready for r in rows(db, cid).values()), clock=clock)
        done = _rollout(db, cid)
        assert done is not None and done.previous is not None
        assert done.previous.revision == r1 and done.batches == 3
        # The template itself did not change: only the revision (the output's digest).
        assert done.target.containers == first.target.containers
        after = rows(db, cid)
        assert {r.revision for r in after.values()} == {done.target.revision}
        assert {x: r.node for x, r in after.items()} == nodes
        for x in after:
            assert url(x) == "http://new"
            env = provider.replicas.env_of(replica_key(cid, x))["web"]
            assert env["ALL"] == '["http://new", "http://new", "http://new"]'
        said = events(db, cid)
        assert any(
            f"to {done.target.revision} (the outputs seed.url changed)" in m for m in said
        ), said
        # One rollout for the change: never a second one to a partial value mid-run.
        assert sum("rolling update from revision" in m for m in said) == 1, said
    finally:
        await rig.engine.stop()

"""`max_surge` in a workload's rolling update on `sim` (issue 22, item 2), driven by a
ManualClock on SQLite and PostgreSQL: the surge replica is placed by the second-level solver on
a server the workload does not use (its port is free there), started on the new revision, each
batch replaces one old replica in place beside it (max_unavailable 0: availability never
drops), and it is stopped when the rollout completes; when no server can take a surge replica
(every server already binds the port), the rollout says so and goes on in place."""

from __future__ import annotations

import asyncio
import re

from shoal.clock import ManualClock
from shoal.model.catalogs import synthetic_inventory
from shoal.model.workload_rollouts import WorkloadPhase
from shoal.providers.sim.provider import SimProvider
from shoal.store import workload_rollouts as rollout_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.workloads.support import events, rig_for, rows, settled

DOC = """
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 4
workloads:
  api:
    replicas: REPLICAS
    max: 4
    containers: [{name: api, image: IMAGE, ports: [8080], resources: {cpu: 0.25}}]
    update: {max_unavailable: 0, max_surge: 1}
"""


def _doc(image: str, replicas: int = 3) -> str:
    return DOC.replace("IMAGE", image).replace("REPLICAS", str(replicas))


def _phase(db: Database, cid: str) -> tuple[WorkloadPhase | None, str | None, int]:
    with db.reading() as conn:
        found = rollout_repo.of_cluster(conn, cid)
    if not found:
        return None, None, 0
    return found[0].phase, found[0].target.revision, found[0].batches


async def test_surge_replica_on_a_free_server_then_in_place_when_none_is_free(
    db: Database,
) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, _doc("img:1"))
        cid = sub.cluster.id
        await until(lambda: len(rows(db, cid)) == 3 and settled(db, cid), clock=clock)
        await until(lambda: all(r.ready for r in rows(db, cid).values()), clock=clock)
        _, r1, _ = _phase(db, cid)
        nodes = {x: r.node for x, r in rows(db, cid).items()}
        seen_max = 0

        def done() -> bool:
            nonlocal seen_max
            now = rows(db, cid)
            seen_max = max(seen_max, len(now))
            phase, revision, _ = _phase(db, cid)
            return phase is WorkloadPhase.COMPLETE and revision != r1 and len(now) == 3

        await asyncio.to_thread(rig.service.update, ADMIN, "svc", _doc("img:2"))
        await until(done, clock=clock, step_s=0.2)
        _, r2, batches = _phase(db, cid)
        assert batches == 3
        final = rows(db, cid)
        assert sorted(final) == ["api-1", "api-2", "api-3"]
        assert {r.revision for r in final.values()} == {r2}
        assert {x: r.node for x, r in final.items()} == nodes  # replaced in place
        texts = events(db, cid)
        started = [t for t in texts if "surge replica api-4 started on" in t]
        assert len(started) == 1
        surge_node = re.search(r"started on (\S+) ", started[0])
        assert surge_node is not None and surge_node.group(1) not in nodes.values()
        assert any("surge replica api-4 stopped" in t for t in texts)
        batch_lines = [t for t in texts if re.search(rf"rolling batch \d to revision {r2}", t)]
        assert len(batch_lines) == 3 and all("1 surge replica(s) ready" in t for t in batch_lines)
        assert seen_max <= 4

        # Four replicas on four servers: no server is free of port 8080, so no surge.
        await asyncio.to_thread(rig.service.scale_workload, ADMIN, "svc", "api", 4)
        await until(lambda: len(rows(db, cid)) == 4 and settled(db, cid), clock=clock)
        await until(lambda: all(r.ready for r in rows(db, cid).values()), clock=clock)
        await asyncio.to_thread(rig.service.update, ADMIN, "svc", _doc("img:3", 4))

        def in_place() -> bool:
            phase, revision, _ = _phase(db, cid)
            return phase is WorkloadPhase.COMPLETE and revision not in (r1, r2)

        await until(in_place, clock=clock, step_s=0.2)
        _, r3, batches = _phase(db, cid)
        assert batches == 4 and len(rows(db, cid)) == 4
        assert {r.revision for r in rows(db, cid).values()} == {r3}
        texts = events(db, cid)
        assert any("no room for 1 surge replica(s)" in t for t in texts)
        assert not any("surge replica api-5 started" in t for t in texts)
    finally:
        await rig.engine.stop()

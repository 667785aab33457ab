"""The steps of a workload's rolling update (engine/workload_rollouts.py) on plain values, with
the sim runtime and no database: a batch is `max_unavailable` replicas, fewer while others are
down, replicas already down first; the next batch waits until the previous one reads ready; a
batch still not ready after the deadline turns the rollout into a rollback, which ends
ROLLED_BACK with every replica on the previous template."""

from __future__ import annotations

from shoal.engine import workload_rollouts as rollouts
from shoal.model.workload_rollouts import ContainerRun, WorkloadPhase, replica_template
from shoal.model.workloads import Container, RollingSettings, Workload
from shoal.providers.replicas import ReplicaState
from shoal.providers.sim.replicas import SimReplicas
from shoal.store.records import NodeRecord
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ReplicaRow
from tests.support.records import cluster_record, node_record

CLUSTER = cluster_record("c1")


def _node(name: str) -> NodeRecord:
    return node_record(name, group_name="ctl", host=f"h-{name}")


def _workload(image: str, unavailable: int) -> Workload:
    return Workload(
        "api",
        (Container("api", image),),
        6,
        update=RollingSettings(max_unavailable=unavailable, max_surge=0),
    )


NAMES = [f"api-{i}" for i in range(1, 7)]
LIVE = {f"n{i}": _node(f"n{i}") for i in range(1, 7)}
KEYS = {x: f"c1/{x}" for x in NAMES}


async def test_batches_wait_for_readiness_and_a_late_batch_rolls_back() -> None:
    runtime = SimReplicas(lambda: lambda server: True)
    old, new = _workload("img:1", 2), _workload("img:2", 2)
    t1, t2 = replica_template(old), replica_template(new)
    assert t1.revision != t2.revision and t2.containers == (ContainerRun("api", "img:2"),)
    rows = {
        x: ReplicaRow("c1", x, "api", f"n{i}", True, revision=t1.revision)
        for i, x in enumerate(NAMES, 1)
    }
    rows["api-5"] = ReplicaRow("c1", "api-5", "api", "n5", False, revision=t1.revision)
    for x, row in rows.items():
        await runtime.start_replica(KEYS[x], f"srv-{row.node}", t1)
    out = rollouts.StepOut()
    first = RolloutRow("c1", "api", WorkloadPhase.COMPLETE, t1, None, 0.0)
    roll, changed = rollouts.begin(CLUSTER, new, first, 10.0, out)
    assert changed and roll.phase is WorkloadPhase.ROLLING and roll.previous == t1
    states = {k: ReplicaState.RUNNING for k in KEYS.values()}

    # api-5 is down already: it goes first, and only one ready replica joins it (budget 2).
    roll = await rollouts.step(runtime, CLUSTER, new, roll, rows, states, LIVE, KEYS, 10.0, out)
    assert roll.batch == ("api-5", "api-1") and roll.batches == 1
    assert runtime.revision_of(KEYS["api-1"]) == t2.revision
    assert runtime.revision_of(KEYS["api-2"]) == t1.revision

    # The batch's api-1 reads not ready: nothing more moves until the deadline...
    rows["api-1"] = ReplicaRow("c1", "api-1", "api", "n1", False, revision=t2.revision)
    for now in (11.0, 10.0 + rollouts.PROGRESS_DEADLINE_S - 1):
        again = await rollouts.step(runtime, CLUSTER, new, roll, rows, states, LIVE, KEYS, now, out)
        assert again == roll
    assert runtime.revision_of(KEYS["api-2"]) == t1.revision
    # ...then the rollout fails and rolls back, the down replicas first.
    now = 10.0 + rollouts.PROGRESS_DEADLINE_S
    roll = await rollouts.step(runtime, CLUSTER, new, roll, rows, states, LIVE, KEYS, now, out)
    assert roll.phase is WorkloadPhase.ROLLING_BACK and roll.reason is not None
    assert "api-1 not ready" in roll.reason
    while roll.phase is WorkloadPhase.ROLLING_BACK:
        now += 1
        roll = await rollouts.step(runtime, CLUSTER, new, roll, rows, states, LIVE, KEYS, now, out)
    assert roll.phase is WorkloadPhase.ROLLED_BACK
    assert {r.revision for r in rows.values()} == {t1.revision}
    assert all(runtime.revision_of(k) == t1.revision for k in KEYS.values())
    assert rollouts.goal_of(roll) == t1
    # The document unchanged: it stays rolled back; changed again: a new rollout from t1.
    assert rollouts.begin(CLUSTER, new, roll, now, out) == (roll, False)
    third, changed = rollouts.begin(CLUSTER, _workload("img:3", 2), roll, now, out)
    assert changed and third.phase is WorkloadPhase.ROLLING and third.previous == t1
    texts = [e.message for e in out.events]
    assert any("rolling batch 1 to revision" in t and "api-5, api-1" in t for t in texts)
    assert any("failed" in t for t in texts)

"""The batch arithmetic of a rolling update with surge replicas (engine/workload_rollouts.py), on
plain values with the sim runtime and no database: a batch is `max_unavailable` + the ready
surge replicas, surge replicas are never replaced themselves, at every step the ready
replicas (surge ones included) stay at or above `replicas - max_unavailable`, and with
`max_unavailable` 0 nothing goes down until a surge replica is ready (none ready by the
deadline fails the rollout)."""

from __future__ import annotations

import itertools

from shoal.engine import workload_rollouts as rollouts
from shoal.model.workload_rollouts import WorkloadPhase, replica_template
from shoal.model.workloads import Container, RollingSettings, Workload
from shoal.providers.replicas import ReplicaState
from shoal.providers.sim.replicas import SimReplicas
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ReplicaRow
from tests.engine.test_workload_rollout_steps import CLUSTER, _node


def _workload(image: str, replicas: int, unavailable: int, surge: int) -> Workload:
    return Workload(
        "api",
        (Container("api", image),),
        replicas,
        update=RollingSettings(max_unavailable=unavailable, max_surge=surge),
    )


def test_surge_helpers() -> None:
    w = _workload("img:2", 3, 0, 2)
    rolling = RolloutRow("c1", "api", WorkloadPhase.ROLLING, replica_template(w), None, 0.0)
    back = RolloutRow("c1", "api", WorkloadPhase.ROLLING_BACK, replica_template(w), None, 0.0)
    assert rollouts.surge_of(w, rolling) == 2 and rollouts.surge_of(w, back) == 0
    assert rollouts.surge_of(w, None) == 0
    assert rollouts.surged(w, 2).replicas == 5 and rollouts.surged(w, 0) is w
    assert [rollouts.is_surge(w, x) for x in ("api-3", "api-4", "api-5", "api-x", "web-4")] == [
        False,
        True,
        True,
        False,
        False,
    ]


async def test_batches_never_take_more_than_unavailable_plus_ready_surge() -> None:
    """Every small case (replicas 1..8, max_unavailable 0..3, max_surge 0..3, how many surge
    replicas read ready): a few hundred plain steps, no engine."""
    grid = itertools.product(range(1, 9), range(4), range(4), range(4))
    for replicas, unavailable, surge, ready_surge in grid:
        await _roll_once(replicas, unavailable, surge, ready_surge)


async def _roll_once(replicas: int, unavailable: int, surge: int, ready_surge: int) -> None:
    case = (replicas, unavailable, surge, ready_surge)
    if (unavailable == 0 and surge == 0) or ready_surge > surge:
        return  # refused by the document's checks / not a case
    old, new = (
        _workload("img:1", replicas, unavailable, surge),
        _workload("img:2", replicas, unavailable, surge),
    )
    t1, t2 = replica_template(old), replica_template(new)
    runtime = SimReplicas(lambda: lambda server: True)
    names = [f"api-{i}" for i in range(1, replicas + surge + 1)]
    live = {f"n{i}": _node(f"n{i}") for i in range(1, len(names) + 1)}
    keys = {x: f"c1/{x}" for x in names}
    rows: dict[str, ReplicaRow] = {}
    for i, x in enumerate(names, 1):
        if rollouts.is_surge(new, x):
            up = i - replicas <= ready_surge
            rows[x] = ReplicaRow("c1", x, "api", f"n{i}", up, started_at=0.0, revision=t2.revision)
        else:
            rows[x] = ReplicaRow("c1", x, "api", f"n{i}", True, revision=t1.revision)
    states = {k: ReplicaState.RUNNING for k in keys.values()}
    out = rollouts.StepOut()
    roll = RolloutRow("c1", "api", WorkloadPhase.ROLLING, t2, t1, 0.0)
    now = 1.0
    while roll.phase is WorkloadPhase.ROLLING:
        if unavailable == 0 and ready_surge == 0:
            now += rollouts.PROGRESS_DEADLINE_S / 2  # waiting for a surge replica to be ready
        before = dict(rows)
        roll = await rollouts.step(runtime, CLUSTER, new, roll, rows, states, live, keys, now, out)
        replaced = [x for x in rows if rows[x] != before[x]]
        assert not any(rollouts.is_surge(new, x) for x in replaced), case
        budget = unavailable + ready_surge if surge else max(1, unavailable)
        assert len(replaced) <= budget, case
        # Replaced replicas are down while they start: what stays up (surge ones included)
        # is enough; in place with max_unavailable 0, one replica goes at a time.
        up = sum(1 for x, r in before.items() if r.ready and x not in replaced)
        assert up >= replicas - max(unavailable, 0 if surge else 1), (case, up)
        now += 1.0
        assert now < 100, ("the rollout never ended", case)
    if unavailable == 0 and ready_surge == 0:  # nothing may go down: failed at the deadline
        assert roll.phase is WorkloadPhase.ROLLING_BACK and "no surge replica ready" in str(
            roll.reason
        )
        return
    assert roll.phase is WorkloadPhase.COMPLETE, case
    assert all(r.revision == t2.revision for x, r in rows.items() if not rollouts.is_surge(new, x))


def test_a_members_change_does_not_retry_a_rolled_back_template() -> None:
    w = _workload("img:bad", 2, 1, 0)
    failed = rollouts.rendered(w, "salt-1")
    back = RolloutRow("c1", "api", WorkloadPhase.ROLLED_BACK, failed, None, 0.0)
    out = rollouts.StepOut()
    same, changed = rollouts.begin(CLUSTER, w, back, 1.0, out, salt="salt-2", members=("db",))
    assert same == back and not changed and not out.events
    # The document changing again starts a new rollout (members or not).
    fixed = _workload("img:good", 2, 1, 0)
    again, changed = rollouts.begin(CLUSTER, fixed, back, 1.0, out, salt="salt-2", members=("db",))
    assert changed and again.phase is WorkloadPhase.ROLLING

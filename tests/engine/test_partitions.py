"""Work that divides (issue 23): management partitions balanced over live engines, engines
woken by PostgreSQL's NOTIFY, node claims capped at a fair share; on SQLite and PostgreSQL.

Time is the test's: leases run out when the test moves its clock, never by waiting."""

from __future__ import annotations

import threading
import uuid

import pytest

from shoal.clock import ManualClock
from shoal.model.enums import ActionKind
from shoal.store import actions as action_repo
from shoal.store import engines
from shoal.store.actions import NewAction
from shoal.store.database import Database
from shoal.store.wakeups import Listener
from tests.engine.support import make_rig

TTL = 30.0


def _step(db: Database, clock: ManualClock, alive: list[str]) -> dict[str, frozenset[int]]:
    """One heartbeat and one balance of each live engine, twice (a share given back by one
    engine is taken by another on its next balance)."""
    held: dict[str, frozenset[int]] = {}
    for _ in range(2):
        for e in alive:
            engines.register(db, e, clock.now(), TTL)
        for e in alive:
            held[e] = engines.balance(db, e, clock.now(), TTL)
    return held


def _assert_split(held: dict[str, frozenset[int]]) -> None:
    every = [p for ps in held.values() for p in ps]
    assert sorted(every) == list(range(engines.PARTITIONS)), "each partition held exactly once"
    share = engines.fair_share(engines.PARTITIONS, len(held))
    for e, ps in held.items():
        assert share - len(held) <= len(ps) <= share, (e, len(ps))


def test_partitions_divide_and_a_death_moves_only_its_share(db: Database) -> None:
    clock = ManualClock(1_000.0)
    held = _step(db, clock, ["a", "b", "c"])
    _assert_split(held)
    # c dies: its registration and its partitions run out; a and b keep theirs and take c's.
    for _ in range(7):
        clock.advance(TTL / 6)
        after = _step(db, clock, ["a", "b"])
    _assert_split(after)
    assert held["a"] <= after["a"] and held["b"] <= after["b"]
    moved = (after["a"] - held["a"]) | (after["b"] - held["b"])
    assert moved == held["c"]


def test_a_new_engine_takes_a_share_from_the_others(db: Database) -> None:
    clock = ManualClock(1_000.0)
    held = _step(db, clock, ["a", "b", "c"])
    after = _step(db, clock, ["a", "b", "c", "d"])
    _assert_split(after)
    assert after["d"], "the fourth engine manages something"
    for e in ("a", "b", "c"):
        assert after[e] <= held[e], "the others only gave partitions up"


def test_a_stopping_engine_hands_its_partitions_back_at_once(db: Database) -> None:
    clock = ManualClock(1_000.0)
    held = _step(db, clock, ["a", "b"])
    engines.release_partitions(db, "b")
    engines.unregister(db, "b")
    after = _step(db, clock, ["a"])  # no clock movement: nothing had to run out
    assert after["a"] == held["a"] | held["b"] == frozenset(range(engines.PARTITIONS))


def test_engines_that_do_not_manage_leave_no_partition_unmanaged(db: Database) -> None:
    clock = ManualClock(1_000.0)
    engines.register(db, "runs-only", clock.now(), TTL)  # an engine with manage = false
    held = _step(db, clock, ["a", "b"])
    _assert_split(held)


def test_partition_of_is_stable_and_spread() -> None:
    ids = [str(uuid.uuid5(uuid.NAMESPACE_URL, str(i))) for i in range(6400)]
    counts = [0] * engines.PARTITIONS
    for i in ids:
        counts[engines.partition_of(i)] += 1
    assert engines.partition_of(ids[0]) == engines.partition_of(ids[0])
    assert min(counts) > 50 and max(counts) < 150


def _ready(db: Database, n: int) -> None:
    with db.transaction() as conn:
        action_repo.insert_actions(
            conn,
            [
                NewAction(id=str(uuid.uuid4()), project_id="p", kind=ActionKind.NODE_CREATE)
                for _ in range(n)
            ],
            1_000.0,
        )


def test_engines_notified_of_new_work_on_postgresql_only(db: Database) -> None:
    woken = threading.Event()
    listener = Listener(db, woken.set)
    if db.is_sqlite:
        assert not listener.available  # SQLite keeps the engine's short poll
        return
    listener.start()
    try:
        deadline = threading.Event()
        # Healthy once its LISTEN is in place; it wakes once then (work sent meanwhile).
        for _ in range(600):
            if listener.healthy:
                break
            deadline.wait(0.1)
        assert listener.healthy
        woken.clear()
        _ready(db, 3)
        assert woken.wait(60), "a committed READY action wakes the listening engine"
    finally:
        listener.stop()


@pytest.mark.parametrize("engines_alive", [1, 3])
def test_node_claims_take_a_fair_share(db: Database, engines_alive: int) -> None:
    clock = ManualClock(1_000.0)
    rig = make_rig(db, clock=clock, engine_id="e0")
    for i in range(engines_alive):
        engines.register(db, f"e{i}", clock.now(), TTL)
    _ready(db, 90)
    claimed = rig.engine._claim(2000, True)
    assert len(claimed) == 90 // engines_alive


async def test_an_idle_engine_waits_only_until_a_dead_engines_lease_runs_out(
    db: Database,
) -> None:
    """Issue 23: nothing NOTIFYs when a lease runs out, so an engine idle at its longest wait
    ends that wait when the first lease of another engine's action runs out, and claims the
    action then; with nothing held elsewhere (or only by itself) it keeps its long wait."""
    clock = ManualClock(1_000.0)
    rig = make_rig(db, clock=clock, engine_id="e1")
    engine = rig.engine
    engine._listener.healthy = True  # as while NOTIFY wakes it: the long back-off applies
    longest = engine._idle_max_s
    assert longest > engine.idle_poll_s
    assert await engine._idle_wait_s(8) == longest, "nothing runs anywhere"
    _ready(db, 1)
    with db.transaction() as conn:
        [held] = action_repo.claim(
            conn,
            owner="dead",
            now=clock.now(),
            lease_s=10.0,
            limit=1,
            node_level=True,
            skip_locked=False,
        )
    clock.advance(10.0 - longest / 2)  # the dead engine's lease runs out in half the wait
    wait = await engine._idle_wait_s(8)
    assert wait == pytest.approx(longest / 2 + engine.poll_s)
    assert await engine._idle_wait_s(0) == engine.idle_poll_s, "a short wait reads nothing"
    assert engine._claim(2000, True) == [], "still held"
    clock.advance(wait)  # the wait ends: the lease has run out and the engine claims it
    [taken] = engine._claim(2000, True)
    assert (taken.id, taken.owner, taken.attempts) == (held.id, "e1", 2)
    assert await engine._idle_wait_s(8) == longest, "its own leases do not shorten its wait"

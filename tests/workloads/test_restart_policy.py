"""The restart policy as a value (issue 36, item 5; model/restarts.py): Kubernetes' rule as a pure
function of a container's exit history and the clock, checked on the engine's `ManualClock` —
the first exit of a streak restarted at once, the next after 10 s, doubling to 300 s, and a run
of 10 minutes ending the streak."""

from __future__ import annotations

from shoal.clock import ManualClock
from shoal.model.restarts import KUBERNETES, RestartBackoff


def test_first_exit_at_once_then_doubling_to_the_cap() -> None:
    clock = ManualClock()
    policy = KUBERNETES
    streak, started = 0, clock.now()
    waits: list[float] = []
    for _ in range(9):
        clock.advance(1.0)  # it ran a second, then exited
        due = policy.after_exit(streak, started, clock.now())
        assert due.at == clock.now() + due.wait_s
        waits.append(due.wait_s)
        streak = due.streak
        clock.advance(due.wait_s)
        started = clock.now()
    assert waits == [0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0, 300.0]
    assert streak == 9


def test_ten_minutes_of_running_ends_the_streak() -> None:
    clock = ManualClock()
    policy = KUBERNETES
    started = clock.now()
    clock.advance(599.0)
    assert policy.after_exit(4, started, clock.now()).wait_s == 80.0  # the 5th quick exit in a row
    clock.advance(1.0)
    due = policy.after_exit(4, started, clock.now())
    assert due.at_once and due.streak == 1 and due.at == clock.now()
    # and the next quick exit waits the first back-off again
    clock.advance(2.0)
    assert policy.after_exit(due.streak, clock.now() - 2.0, clock.now()).wait_s == 10.0


def test_a_container_never_started_starts_at_once_and_begins_no_streak() -> None:
    due = KUBERNETES.after_exit(7, None, 5.0)
    assert due.at_once and due.at == 5.0 and due.streak == 1


def test_other_figures() -> None:
    policy = RestartBackoff(first_s=1.0, max_s=5.0, reset_after_s=30.0)
    assert [policy.wait_s(n) for n in range(1, 7)] == [0.0, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert policy.wait_s(10_000) == 5.0  # no overflow on a very long streak
    assert policy.after_exit(3, 0.0, 30.0).at_once

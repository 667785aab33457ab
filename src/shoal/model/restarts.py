"""When a container that exited is started again (issue 36, item 5): Kubernetes' rule, as a
value and a pure function of the container's exit history and the clock.

The kubelet restarts a container's first exit at once and backs off only when it keeps exiting:
10 s before the second restart, doubling, at most 300 s; a container that ran 10 minutes since
its last start begins again at once. Shoal's workload keeper (engine/workloads.py) follows it
for replicas, and the local provider's crash-loop guard (providers/local/crashloops.py) for
containers of compose and kubelet deployments, whose runtime's own restart policy (conmon's)
would otherwise restart them without end. Nothing here reads a clock: callers pass `now` from
the engine's clock (shoal/clock.py), so tests move time instead of waiting for it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KUBERNETES", "Restart", "RestartBackoff"]


@dataclass(frozen=True, slots=True)
class Restart:
    """What an exit decides: when to start the container again, and its streak so far."""

    at: float
    """When the start is due (`now` for the first exit of a streak)."""
    streak: int
    """Its exits in a row, each after running less than `reset_after_s` (1: the first)."""
    wait_s: float

    @property
    def at_once(self) -> bool:
        return self.wait_s <= 0


@dataclass(frozen=True, slots=True)
class RestartBackoff:
    """Kubernetes' back-off: the first exit of a streak restarted at once, the next after
    `first_s`, doubling, at most `max_s`; a run of `reset_after_s` ends the streak."""

    first_s: float = 10.0
    max_s: float = 300.0
    reset_after_s: float = 600.0

    def wait_s(self, streak: int) -> float:
        """The wait before the restart of the `streak`-th exit in a row: 0, 10, 20, 40 ... 300."""
        if streak <= 1:
            return 0.0
        return min(self.first_s * (1 << min(streak - 2, 32)), self.max_s)

    def after_exit(self, streak: int, started_at: float | None, now: float) -> Restart:
        """The restart of a container that exited at `now`, having started at `started_at`
        (None: never started, which is no exit of its own), `streak` exits in a row before."""
        if started_at is None or now - started_at >= self.reset_after_s:
            streak = 0
        streak = max(0, streak) + 1
        wait = self.wait_s(streak)
        return Restart(now + wait, streak, wait)


KUBERNETES = RestartBackoff()
"""The kubelet's figures (its `MaxContainerBackOff` 300 s, initial 10 s, reset after 10 min)."""

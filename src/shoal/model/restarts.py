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

import json
import re
from dataclasses import asdict, dataclass

__all__ = [
    "CONTAINER_LOOPS",
    "KUBERNETES",
    "ContainerLoop",
    "Restart",
    "RestartBackoff",
    "compose_project",
    "loops_json",
    "loops_of",
]


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


@dataclass(frozen=True, slots=True)
class ContainerLoop:
    """A container of a deployment (compose or Pod) that keeps exiting: it exited again within
    `reset_after_s` of its last start (issue 36, item 3). What the provider saw, written by the
    manager (store/container_loops.py) and shown on the deployment it belongs to."""

    container: str
    project: str
    """The compose project (`com.docker.compose.project`: the deployment's name as
    docker-compose writes it, `compose_project`) or the Pod's name; "" when unknown."""
    exits: int
    """Exits in a row, each before it had run `reset_after_s`."""
    exit_code: int | None
    output: str
    """The end of its output before its last exit (bounded)."""
    restart_at: float | None
    """When it starts again (wall clock of the provider), None when it runs."""


_COMPOSE_UNSAFE = re.compile(r"[^-_a-z0-9]")


def compose_project(name: str) -> str:
    """The project name docker-compose gives a deployment's directory (heat-agents' hook runs
    each deployment in a directory named after it): lower case, only `-_a-z0-9` kept."""
    return _COMPOSE_UNSAFE.sub("", name.lower())


CONTAINER_LOOPS = "container_loops"
"""The key of a server's details (a provider's `Resource.details`) carrying its loops."""


def loops_json(loops: list[ContainerLoop]) -> str:
    """How a provider passes its loops in a resource's details (strings only there)."""
    return json.dumps([asdict(x) for x in loops], separators=(",", ":"))


def loops_of(text: str | None) -> list[ContainerLoop]:
    """The loops a resource's details carry (none when absent or unreadable)."""
    if not text:
        return []
    try:
        raw = json.loads(text)
        return [
            ContainerLoop(
                str(x["container"]),
                str(x["project"]),
                int(x["exits"]),
                None if x["exit_code"] is None else int(x["exit_code"]),
                str(x["output"]),
                None if x["restart_at"] is None else float(x["restart_at"]),
            )
            for x in raw
        ]
    except (ValueError, TypeError, KeyError):
        return []

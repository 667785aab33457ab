"""Containers of compose and kubelet deployments that keep exiting (issue 36, items 3 and 5).

Their restart policy (`restart: always`, `restartPolicy: Always`) is conmon's: it restarts a
dead container at once, every time, so a container that cannot start (a port another holds)
died and came back ten times a second while its deployment read COMPLETE. Kubernetes restarts a
first exit at once and backs off after (model/restarts.py); so does this guard, per server's
container store:

- it reads each store's podman event log (the file exitwatch.py reads for replicas) for the
  containers that are not replicas (the keeper restarts those): `start` events say when a
  container last started, `died` its exit code, and `restart` (which conmon logs only when the
  policy restarts an exit, never after a stop by a user, a node's stop, `kube down` or a
  compose recreate) that it exited of its own and is being started again;
- an exit restarted at once by the policy (the first of a streak) is left to conmon; an exit
  that comes within 10 minutes of the last start is a loop: the guard stops the container (a
  stop by the user, which conmon's policy respects), keeps the end of its output, and starts it
  again through the node's own podman service (so it joins the node's network namespace, as
  conmon would have) once the back-off has passed: 10 s, doubling, at most 300 s;
- `loops(store)` reports the containers in such a streak (`ContainerLoop`: exits in a row, last
  exit code, output, when it starts again), which the server's view carries to the manager, who
  keeps them per node (store/container_loops.py) and the deployment views show (DEGRADED).

The guard runs while the provider is used by an engine (started by its first listing); it
holds nothing that a restart of Shoal would need: after one, a looping container is seen again
at its next exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shoal.model.restarts import KUBERNETES, ContainerLoop, RestartBackoff
from shoal.providers.local import containers
from shoal.providers.local.podman import Podman, Store

log = logging.getLogger("shoal.local.crashloops")

PERIOD_S = 0.2
"""How often the event logs' sizes are looked at."""
MAX_CONTAINERS = 256
"""Containers followed per store (the oldest forgotten beyond)."""
MAX_READ = 1 << 20
OUTPUT_LINES = 20
OUTPUT_CHARS = 2000
REPLICA_LABEL = "shoal.replica"
PROJECT_LABELS = ("com.docker.compose.project", "io.kubernetes.pod.name")


@dataclass(frozen=True, slots=True)
class Watched:
    """A store to guard, and the node's podman service socket (where starts go)."""

    store: Store
    socket: Path


@dataclass(slots=True)
class _Container:
    started_at: float | None = None
    streak: int = 0
    exits: int = 0
    project: str = ""
    exit_code: int | None = None
    output: str = ""
    restart_at: float | None = None
    """When the guard starts it again (None: not held by the guard)."""


@dataclass(slots=True)
class _Log:
    offset: int | None = None
    containers: dict[str, _Container] | None = None


class CrashLoops:
    """The guard over every store `watched()` names."""

    def __init__(
        self,
        find: Callable[[], Podman | None],
        watched: Callable[[], list[Watched]],
        policy: RestartBackoff = KUBERNETES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._find = find
        self._watched = watched
        self._policy = policy
        self._clock = clock
        self._logs: dict[Path, _Log] = {}
        self._task: asyncio.Task[None] | None = None

    # -- running -------------------------------------------------------------------------------

    def ensure_running(self) -> None:
        """Start the guard's loop on the running event loop (once)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="crashloops")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self.once()
            except Exception:  # (a look that failed is tried again; the guard must not die)
                log.exception("guarding containers' restarts failed")
            await asyncio.sleep(PERIOD_S)

    async def once(self) -> None:
        """Read what the stores' logs added; stop the containers in a loop, start the ones
        whose back-off has passed."""
        found = self._find()
        if found is None:
            return
        watched = self._watched()
        for gone in set(self._logs) - {w.store.root for w in watched}:
            del self._logs[gone]
        for w in watched:
            await self._guard(found, w)

    async def _guard(self, found: Podman, w: Watched) -> None:
        book = self._logs.setdefault(w.store.root, _Log())
        lines = _added(w.store.root / containers.EVENTS_NAME, book)
        held = book.containers if book.containers is not None else {}
        book.containers = held
        for event in lines:
            name = self._seen(held, event)
            if name is not None:
                await self._hold(found, w.store, name, held[name])
        now = self._clock()
        for name, c in held.items():
            if c.restart_at is not None and c.restart_at <= now:
                c.restart_at = None
                c.started_at = now
                ok = await asyncio.to_thread(_api_start, w.socket, name)
                if not ok:
                    log.warning("could not start %s again after its back-off", name)
        while len(held) > MAX_CONTAINERS:
            del held[next(iter(held))]

    def _seen(self, held: dict[str, _Container], event: dict[str, object]) -> str | None:
        """Take one event in; the name of a container to stop now (an exit in a loop)."""
        attributes = event.get("Attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        name = event.get("Name")
        if event.get("Type") != "container" or not isinstance(name, str) or not name:
            return None
        if REPLICA_LABEL in attributes:
            return None  # the workload keeper restarts replicas
        c = held.setdefault(name, _Container())
        c.project = next((str(attributes[k]) for k in PROJECT_LABELS if k in attributes), c.project)
        status = event.get("Status")
        now = self._clock()
        if status == "start":
            if c.restart_at is None:  # (one the guard holds is started by the guard)
                c.started_at = now
            return None
        if status == "remove":
            held.pop(name, None)
            return None
        if status == "died":
            code = event.get("ContainerExitCode")
            c.exit_code = code if isinstance(code, int) else None
            return None
        if status != "restart":
            return None
        # An exit the runtime's policy restarts (conmon logs `restart` after `died`; a stop by
        # a user, a node's stop, `kube down` or a compose recreate never does).
        if c.restart_at is not None:  # held, and restarted anyway: held again
            return name if c.restart_at > now else None
        due = self._policy.after_exit(c.streak, c.started_at, now)
        c.streak = due.streak
        c.exits = due.streak
        if due.at_once:
            return None  # the first exit of a streak: restarted at once, as it is
        c.restart_at = due.at
        return name

    async def _hold(self, found: Podman, store: Store, name: str, c: _Container) -> None:
        """Stop a looping container until its back-off has passed; keep its last output."""
        await asyncio.to_thread(containers.run, found, store, "stop", "--time", "0", name)
        text = await asyncio.to_thread(
            containers.run, found, store, "logs", "--tail", str(OUTPUT_LINES), name
        )
        if text.strip():
            c.output = text.strip()[-OUTPUT_CHARS:]

    # -- what the views report -------------------------------------------------------------

    def loops(self, store: Store) -> list[ContainerLoop]:
        """The store's containers in a streak of exits (the second in a row or more), while
        they wait for their back-off or have not yet run `reset_after_s` since."""
        book = self._logs.get(store.root)
        if book is None or not book.containers:
            return []
        now = self._clock()
        return [
            ContainerLoop(name, c.project, c.exits, c.exit_code, c.output, c.restart_at)
            for name, c in sorted(book.containers.items())
            if c.streak >= 2
            and (
                c.restart_at is not None
                or c.started_at is None
                or now - c.started_at < self._policy.reset_after_s
            )
        ]


def _added(path: Path, book: _Log) -> list[dict[str, object]]:
    """The events added to `path` since the last read (from its end the first time)."""
    try:
        size = path.stat().st_size
    except OSError:
        return []
    if book.offset is None or size < book.offset:
        book.offset = size
        return []
    if size == book.offset:
        return []
    try:
        with open(path, "rb") as f:
            f.seek(book.offset)
            added = f.read(min(size - book.offset, MAX_READ))
    except OSError:
        return []
    complete = added.rfind(b"\n") + 1
    if complete == 0 and len(added) == MAX_READ:
        complete = len(added)
    book.offset += complete
    events: list[dict[str, object]] = []
    for line in added[:complete].splitlines():
        if b'"container"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _api_start(socket: Path, name: str, timeout_s: float = 30.0) -> bool:
    """Start the container through the node's podman service (in the node's network)."""
    conn = containers.UnixHTTPConnection(str(socket), timeout_s)
    try:
        conn.request("POST", f"/v4.3.1/libpod/containers/{name}/start")
        status = conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()
    return status in (204, 304)

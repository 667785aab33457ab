"""Simulated containers for workloads' replicas on the `sim` provider (issue 22).

A container belongs to the server it was started on: it reads LOST once that server is no
longer ACTIVE (its host failed, it crashed, it was deleted), and EXITED after `kill` (the test
hook for `kill -9` of a container). Starting is instant, so scale and failure runs measure the
engine, not a runtime. `refuse(image)` makes starts of that image fail as a pull of a missing
image does (`PermanentError`): the injected failure a rolling update must roll back from.
Probes pass while a container runs; `fail_probes` injects failing ones. `env_of(key)` gives the
env each container was last started with (secrets included: a test checks they reach the
runtime, and nothing else)."""

from __future__ import annotations

from collections.abc import Callable

from shoal.model.workloads import Probe, ProbeKind
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.replicas import ReplicaState, ReplicaTemplate
from shoal.providers.sim.shared import Container, ContainerBook, MemoryContainers
from shoal.providers.sim.stall import Stall


class SimReplicas:
    """Containers by key over the simulated cloud: `view()` gives a `server_active(server_id)`
    test for now (failed hosts read once per call, not once per container)."""

    def __init__(
        self,
        view: Callable[[], Callable[[str], bool]],
        book: ContainerBook | None = None,
        stall: Stall | None = None,
    ) -> None:
        self._view = view
        self._stall = stall or Stall()
        self._containers: ContainerBook = book or MemoryContainers()
        self._refused: set[str] = set()
        self._failing: set[tuple[str, ProbeKind | None]] = set()
        self._env: dict[str, dict[str, dict[str, str]]] = {}
        self.starts = 0
        self.probes = 0
        self.probed: dict[tuple[str, ProbeKind], int] = {}
        """(key, kind) -> probes run (tests count what an engine probed)."""

    def refuse(self, image: str) -> None:
        """Starts of `image` fail from now on (an image the registry does not have)."""
        self._refused.add(image)

    async def start_replica(self, key: str, server_id: str, template: ReplicaTemplate) -> None:
        await self._stall.wait()
        if not self._view()(server_id):
            raise ResourceGone(f"server {server_id} is not running")
        refused = [c.image for c in template.containers if c.image in self._refused]
        if refused:
            self._containers.pop(key)  # the old container was replaced: nothing runs
            raise PermanentError(f"image {refused[0]} cannot be pulled")
        self._containers.put(key, Container(server_id, template.revision))
        self._env[key] = {c.name: dict(c.env + c.secret_env) for c in template.containers}
        self.starts += 1

    def forget_server(self, server_id: str) -> None:
        """A server deleted: its containers went with it (as a local node's podman store)."""
        for key in [k for k, c in self._containers.items() if c.server_id == server_id]:
            self._containers.pop(key)

    def containers(self) -> list[tuple[str, Container]]:
        """Every replica container the sim runs, by key (a snapshot)."""
        return self._containers.items()

    def env_of(self, key: str) -> dict[str, dict[str, str]]:
        """Container name -> the env it was last started with ({} when never started)."""
        return self._env.get(key, {})

    def revision_of(self, key: str) -> str | None:
        """The template revision the replica's container runs (None: no container)."""
        c = self._containers.get(key)
        return None if c is None else c.revision

    async def replica_states(self, keys: list[str]) -> dict[str, ReplicaState]:
        await self._stall.wait()
        active = self._view()
        found: dict[str, ReplicaState] = {}
        alive: dict[str, bool] = {}
        for k in keys:
            c = self._containers.get(k)
            if c is None:
                found[k] = ReplicaState.LOST
                continue
            up = alive.get(c.server_id)
            if up is None:
                up = alive[c.server_id] = active(c.server_id)
            if not up:
                found[k] = ReplicaState.LOST
            else:
                found[k] = ReplicaState.EXITED if c.exited else ReplicaState.RUNNING
        return found

    async def stop_replica(self, key: str) -> None:
        await self._stall.wait()
        self._containers.pop(key)

    def fail_probes(self, key: str, failing: bool = True, kind: ProbeKind | None = None) -> None:
        """The replica's probes (of `kind`, or all) fail from now on (or pass again)."""
        if failing:
            self._failing.add((key, kind))
        else:
            self._failing.discard((key, kind))

    async def probe(self, key: str, server_id: str, container: str, probe: Probe) -> bool:
        """Simulated: passes while the container runs, unless failures were injected."""
        self.probes += 1
        self.probed[(key, probe.kind)] = self.probed.get((key, probe.kind), 0) + 1
        c = self._containers.get(key)
        if c is None or c.exited or not self._view()(server_id):
            return False
        return (key, None) not in self._failing and (key, probe.kind) not in self._failing

    def kill(self, key: str) -> None:
        """The container dies (`kill -9`); its server stays up."""
        self._containers.exit(key)

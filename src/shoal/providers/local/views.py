"""What the local provider reports of its resources (`get`, `list_resources`), checked in the
order provider.py's docstring gives: a failed host, a task under way, a lost workdir, then
whether the process runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shoal.model.enums import NodeKind
from shoal.model.restarts import CONTAINER_LOOPS, ContainerLoop, loops_json
from shoal.providers.base import Resource, ResourceState
from shoal.providers.local import agents, containers, podman, processes, volumes
from shoal.providers.local.hosts import FailedHosts
from shoal.providers.local.launcher import LOG_NAME
from shoal.providers.local.locks import ServerLocks
from shoal.providers.local.noderuntime import NodeRuntime
from shoal.providers.local.records import Record, ServerRecord, VolumeRecord


class ResourceViews:
    def __init__(
        self,
        failed: FailedHosts,
        locks: ServerLocks,
        runtime: NodeRuntime,
        loops: Callable[[podman.Store], list[ContainerLoop]] | None = None,
    ) -> None:
        self._failed = failed
        self._locks = locks
        self._runtime = runtime
        self._loops = loops
        """The store's containers that keep exiting (crashloops.py)."""

    def of(self, record: Record) -> Resource:
        if isinstance(record, ServerRecord):
            return self.server(record)
        return self.volume(record)

    def _server_state(self, r: ServerRecord, running: bool) -> tuple[ResourceState, str | None]:
        if r.host in self._failed:
            return ResourceState.MISSING, f"host {r.host} is down"
        if self._locks.task(r.id) is not None:
            return ResourceState.BUILDING, None
        if not Path(r.workdir).is_dir():
            return ResourceState.MISSING, "workdir is gone"
        if running:
            return ResourceState.ACTIVE, None
        return ResourceState.ERROR, "process is not running"

    def server(self, r: ServerRecord) -> Resource:
        running = processes.is_running(r.pid, r.key)
        state, reason = self._server_state(r, running)
        details = {
            "port": str(r.port),
            "image": r.image,
            "workdir": r.workdir,
            "log": str(Path(r.workdir) / LOG_NAME),
            "slot": str(r.slot),
        }
        if r.flavor:
            details["flavor"] = r.flavor
        if r.pid is not None and running:
            details["pid"] = str(r.pid)
        if r.netns is not None:
            details["netns"] = r.netns
        if r.metadata_url is not None:
            details["agents_log"] = str(agents.AgentLayout.of(Path(r.workdir)).log)
            if processes.is_running(r.agent_pid, r.key):
                details["agent_pid"] = str(r.agent_pid)
        task = self._locks.task(r.id)
        if task is not None:
            details["task"] = task
        if reason is not None:
            details["reason"] = reason
        store = self._runtime.store(r)
        if (store.root / containers.EVENTS_NAME).exists():
            # Containers restarted by their policy behind Shoal's back: the manager reports them.
            count, last = containers.restarts(store)
            details["container_restarts"] = str(count)
            if last:
                details["container_restarted"] = last
            looping = self._loops(store) if self._loops is not None else []
            if looping:
                # Containers that keep exiting (issue 36): the manager keeps them per node and
                # the deployment views show their deployments DEGRADED (store/container_loops).
                details[CONTAINER_LOOPS] = loops_json(looping)
        return Resource(
            id=r.id,
            key=r.key,
            kind=NodeKind.SERVER,
            name=r.name,
            state=state,
            host=r.host,
            zone=r.zone,
            address=f"{r.address}:{r.port}",
            details=details,
        )

    def volume(self, r: VolumeRecord) -> Resource:
        path = Path(r.path)
        exists = path.is_dir()
        state = ResourceState.ACTIVE if exists else ResourceState.MISSING
        reason = None if exists else "directory is gone"
        if r.host in self._failed:
            state, reason = ResourceState.MISSING, f"host {r.host} is down"
        details = {
            "path": r.path,
            "size_gb": str(r.size_gb),
            "size_bytes": str(r.size_gb * 1024**3),
            "used_bytes": str(volumes.used_bytes(path) if exists else 0),
        }
        if r.volume_type:
            details["volume_type"] = r.volume_type
        if reason is not None:
            details["reason"] = reason
        return Resource(
            id=r.id,
            key=r.key,
            kind=NodeKind.VOLUME,
            name=r.name,
            state=state,
            host=r.host,
            zone=r.zone,
            attached_to=r.attached_to,
            details=details,
        )

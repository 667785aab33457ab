"""The container part of the local provider: each server's own `podman system service`.

A server gets a runtime beside its agents when podman is here and the home has images to run
(containers.py says how it is laid out); until then a node costs no podman process. The service
runs in the node's network (its containers with `--network host`, compose's `net: host` and
kube play's `hostNetwork`, take that network: the node's) under the watcher that ties it to the
node's process (agentwatch.py), so it stops with the node, never with Shoal.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from shoal.providers.local import agentwatch, containers, launch, podman, processes
from shoal.providers.local.confinement import Confinement
from shoal.providers.local.records import ServerRecord

log = logging.getLogger("shoal.local")

MODES = ("auto", "on", "off")


class NodeRuntime:
    def __init__(
        self, home: Path, mode: str, confinement: Confinement, boot_timeout_s: float
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"local option containers must be auto, on or off, not {mode!r}")
        self.home = home
        self.mode = mode
        """"auto" when podman is installed, "on" (a missing podman is logged as an error), or
        "off"."""
        self._confinement = confinement
        self._boot_timeout_s = boot_timeout_s
        self._podman: podman.Podman | None = None
        self._failed: set[str] = set()
        """Servers whose runtime would not start: their agents run without one."""

    def find(self) -> podman.Podman | None:
        """podman, when containers are wanted and installed (found once)."""
        if self.mode == "off":
            return None
        if self._podman is None:
            try:
                self._podman = podman.Podman.find()
            except podman.PodmanMissingError as e:
                if self.mode == "on":
                    log.error("%s", e)
                return None
        return self._podman

    def wanted(self) -> bool:
        """Nodes get a runtime when podman is here and the home has images to run."""
        return self.find() is not None and podman.has_images(self.home)

    def store(self, record: ServerRecord) -> podman.Store:
        return podman.node_store(self.home, Path(record.workdir))

    def image_store(self) -> podman.Store:
        return podman.home_store(self.home)

    def as_wanted(self, record: ServerRecord) -> bool:
        """Running, or not wanted, or known not to start."""
        if record.id in self._failed or not self.wanted():
            return True
        return processes.is_running(self.pid(self.store(record)), record.key)

    def pid(self, store: podman.Store) -> int | None:
        try:
            return int((store.root / containers.PID_NAME).read_text())
        except (OSError, ValueError):
            return None

    async def start(self, record: ServerRecord) -> dict[str, str]:
        """Start the server's service (again) and the containers that restart `always`; the
        agents' environment naming its socket. Never fails the server: without a runtime,
        only container deployments fail (with the reason in the log)."""
        found = self.find()
        if found is None or record.pid is None:
            return {}
        store = self.store(record)
        bound = containers.bind_path(store, record.key)
        wanted = {containers.DOCKER_HOST_ENV: f"unix://{bound}"}
        if not podman.has_images(self.home):
            return wanted  # started with the agents again once there are images
        try:
            await self._serve(found, record, store, bound)
        except (OSError, RuntimeError, TimeoutError) as e:
            # Not asked for again by this provider (the agents would be restarted over it).
            self._failed.add(record.id)
            log.error("server %s: its container runtime did not start: %s", record.name, e)
        return wanted

    async def _serve(
        self, found: podman.Podman, record: ServerRecord, store: podman.Store, bound: Path
    ) -> None:
        await asyncio.to_thread(self.image_store().write, found)
        await asyncio.to_thread(store.write, found)
        await processes.terminate(self.pid(store), record.key, grace_s=1.0)
        await asyncio.to_thread(containers.prepare, store, bound)
        service = self._confinement.in_network(containers.service_argv(found, store, bound), record)
        argv = [sys.executable, agentwatch.__file__, "--pid", str(record.pid), "--", *service]
        env = store.environment(launch.node_env(key=record.key, resource_id=record.id))
        proc = await asyncio.to_thread(
            processes.spawn, argv, cwd=store.root, log=store.root / containers.LOG_NAME, env=env
        )
        (store.root / containers.PID_NAME).write_text(str(proc.pid))
        await containers.wait_ready(
            bound,
            lambda: processes.is_running(proc.pid, record.key),
            timeout_s=max(self._boot_timeout_s, 30.0),
        )
        await asyncio.to_thread(containers.start_always, found, store)

    async def stop(self, record: ServerRecord, grace_s: float, *, remove: bool = False) -> None:
        """Stop (or remove) the server's containers and its runtime's API."""
        found = self.find()
        store = self.store(record)
        if found is None or not store.storage_conf.exists():
            return
        await processes.terminate(self.pid(store), record.key, grace_s=grace_s)
        stop = containers.remove_all if remove else containers.stop_all
        await asyncio.to_thread(stop, found, store)

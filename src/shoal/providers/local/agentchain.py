"""The agents part of the local provider: each server's Heat agent chain (agents.py), started
confined like its node, under the watcher that ends it with the node (agentwatch.py).

What a deployment's script needs to reach its own server is in the chain's environment, as on
a guest it would know its own address and disk; what was deployed stays deployed across
restarts (it is kept under the workdir, as on a guest's disk).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from shoal.providers.errors import PermanentError
from shoal.providers.local import agents, agentwatch, containers, launch, processes
from shoal.providers.local.confinement import Confinement
from shoal.providers.local.noderuntime import NodeRuntime
from shoal.providers.local.records import RecordStore, ServerRecord
from shoal.providers.local.sandbox import Binds


class AgentChain:
    def __init__(
        self,
        records: RecordStore,
        confinement: Confinement,
        runtime: NodeRuntime,
        install: agents.AgentInstall | None,
        poll_s: float,
    ) -> None:
        self._records = records
        self._confinement = confinement
        self._runtime = runtime
        self._install = install
        self.poll_s = poll_s
        """How long a server's agents wait between polls of its metadata at most."""

    def install(self) -> agents.AgentInstall:
        """Where the agents are; a missing install is a PermanentError."""
        try:
            if self._install is None:
                self._install = agents.AgentInstall.find()
            self._install.check()
        except agents.AgentsNotInstalledError as e:
            raise PermanentError(str(e)) from e
        return self._install

    def as_wanted(self, record: ServerRecord) -> bool:
        """Running when the server has a metadata URL (with its container runtime, once there
        are images to run), not running when it has none."""
        running = processes.is_running(record.agent_pid, record.key)
        if record.metadata_url is None:
            return not running
        return running and self._runtime.as_wanted(record)

    async def start(self, record: ServerRecord, attached: Binds, grace_s: float) -> None:
        """(Re)start the chain in `<workdir>/agents`; with no metadata URL, only stop one left
        running. `attached`: the volumes its sandbox shows."""
        await processes.terminate(record.agent_pid, record.key, grace_s=grace_s)
        record.agent_pid = None
        if record.metadata_url is None:
            self._records.save(record)
            return
        install = self.install()
        layout = agents.AgentLayout.of(Path(record.workdir))
        chain = await asyncio.to_thread(
            agents.prepare,
            layout,
            install,
            metadata_url=record.metadata_url,
            polling_interval_s=self.poll_s,
        )
        if record.pid is None:
            raise PermanentError(f"server {record.name} has no process for its agents to follow")
        runtime_env = await self._runtime.start(record)
        chain = self._confinement.chain(
            chain, record, self._binds(record, install, attached, runtime_env), layout.root
        )
        # Under a watcher (outside the sandbox: it follows the server's pid) that takes the
        # chain down when the server's process dies.
        argv = [sys.executable, agentwatch.__file__, "--pid", str(record.pid), "--", *chain]
        env = self._environment(record, layout, install, runtime_env)
        try:
            proc = await asyncio.to_thread(
                processes.spawn, argv, cwd=layout.root, log=layout.log, env=env
            )
        except OSError as e:
            raise PermanentError(
                f"server {record.name} could not start its agents", fault=str(e)
            ) from e
        record.agent_pid = proc.pid
        self._records.save(record)

    def _binds(
        self,
        record: ServerRecord,
        install: agents.AgentInstall,
        attached: Binds,
        runtime_env: dict[str, str],
    ) -> Binds:
        extra = (*attached.read_write,)
        socket_dir = containers.bind_path(self._runtime.store(record), record.key).parent
        if runtime_env and not socket_dir.is_relative_to(record.workdir):
            # A workdir too deep for a socket's path: its runtime listens under the temporary
            # directory, which the sandbox's own /tmp would hide.
            extra = (*extra, socket_dir)
        return Binds((*attached.read_only, install.bin, install.share), extra)

    def _environment(
        self,
        record: ServerRecord,
        layout: agents.AgentLayout,
        install: agents.AgentInstall,
        runtime_env: dict[str, str],
    ) -> dict[str, str]:
        base = launch.node_env(key=record.key, resource_id=record.id)
        base[agents.WORKDIR_ENV] = record.workdir
        base[agents.ADDRESS_ENV] = record.address
        base[agents.PORT_ENV] = str(record.port)
        base[agents.NAME_ENV] = record.name
        base.update(runtime_env)
        env = agents.environment(layout, install, base)
        return self._confinement.env(env, Path(record.workdir))

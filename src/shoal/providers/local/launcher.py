"""The processes part of the local provider: a server's own program, started detached and
confined, waited for until it answers, stopped or killed as one process group.

A node is started in its own session and, under bubblewrap, without `--die-with-parent`: it
outlives the Shoal that started it (issue 39), which finds it again by its record's pid and key
(processes.py). Its pid is written to `<workdir>/.shoal-pid`, since inside its sandbox it has
its own.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import time
from pathlib import Path

from shoal.files import write_private
from shoal.providers.errors import PermanentError, TemporaryError
from shoal.providers.local import launch, processes
from shoal.providers.local.confinement import Confinement
from shoal.providers.local.nodeserver import PID_FILE
from shoal.providers.local.records import RecordStore, ServerRecord
from shoal.providers.local.sandbox import Binds

LOG_NAME = "node.log"


class NodeLauncher:
    def __init__(
        self, records: RecordStore, confinement: Confinement, boot_timeout_s: float
    ) -> None:
        self._records = records
        self._confinement = confinement
        self.boot_timeout_s = boot_timeout_s

    async def spawn_and_wait(self, record: ServerRecord, attached: Binds) -> None:
        """Start the record's program and wait until it answers; on failure, kill it."""
        workdir = Path(record.workdir)
        log = workdir / LOG_NAME
        env = launch.node_env(key=record.key, resource_id=record.id)
        argv = record.argv
        # bwrap would start and then fail to exec it: say so as an unsandboxed start would.
        sandboxed = self._confinement.sandbox is not None
        if sandboxed and shutil.which(argv[0], path=env.get("PATH")) is None:
            raise PermanentError(
                f"server {record.name} could not start {argv[0]}", fault="no such program"
            )
        argv = self._confinement.node(argv, record, attached)
        env = self._confinement.env(env, workdir)
        try:
            proc = await asyncio.to_thread(processes.spawn, argv, cwd=workdir, log=log, env=env)
        except OSError as e:
            raise PermanentError(
                f"server {record.name} could not start {record.argv[0]}", fault=str(e)
            ) from e
        record.pid = proc.pid
        record.started_at = time.time()
        self._records.save(record)
        if self._confinement.sandbox is not None:
            # Its own pid is its sandbox's; the node shows the one the host knows it by.
            write_private(workdir / PID_FILE, str(proc.pid))
        await self._wait(record, proc.pid, log)

    async def _wait(self, record: ServerRecord, pid: int, log: Path) -> None:
        try:
            await processes.wait_ready(
                pid,
                record.key,
                record.address,
                record.port,
                record.health_path,
                timeout_s=self.boot_timeout_s,
            )
        except processes.ExitedEarlyError as e:
            tail = processes.log_tail(log)
            # The one failure another try can mend: something held the address a moment.
            error = TemporaryError if "Address already in use" in tail else PermanentError
            raise error(f"server {record.name} exited while booting", fault=tail) from e
        except TimeoutError as e:
            await processes.terminate(pid, record.key, grace_s=0.5)
            raise TemporaryError(
                f"server {record.name} did not answer within {self.boot_timeout_s}s",
                fault=processes.log_tail(log),
            ) from e
        except BaseException:
            await asyncio.shield(processes.terminate(pid, record.key, grace_s=0.5))
            raise

    @staticmethod
    async def kill(record: ServerRecord) -> None:
        """SIGKILL the server and its agents, as the loss of its machine would."""
        for pid in (record.pid, record.agent_pid):
            if pid is not None and processes.is_running(pid, record.key):
                processes.signal_group(pid, signal.SIGKILL)
                await processes.terminate(pid, record.key, grace_s=0.0)

"""`shoal server` as a real process for the dashboard tests and benchmark.

The end-to-end tests start `tests/support/serve.py`; the dashboard is checked behind the command
users run, `shoal server --port N`, with the same private `SHOAL_*` environment, log file and
process-group handling (`ServerProcess`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.support.server import START_TIMEOUT_S, ServerProcess, eventually

SHOAL = Path(sys.executable).with_name("shoal")


class ShoalServer(ServerProcess):
    """`shoal server --port N` as a process of its own (the e2e tests run serve.py instead)."""

    def start(self) -> ShoalServer:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [str(SHOAL), "server", "--port", str(self.port), "--log-level", "warning"],
                env=self.env,
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        proc = self.proc

        def healthy() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"shoal server exited:\n{self.log_tail()}")
            try:
                return httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200
            except httpx.TransportError:
                return False

        try:
            eventually(healthy, timeout_s=START_TIMEOUT_S, every_s=0.05)
        except AssertionError:
            self.kill()
            raise RuntimeError(
                f"shoal server did not answer /healthz:\n{self.log_tail()}"
            ) from None
        return self

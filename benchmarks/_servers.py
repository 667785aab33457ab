"""Real `shoal server` processes for the benchmarks that need several (chaos, scale).

One launcher instead of a copy in each: each server in its own process group (so a kill takes
its children too), its log in its home, a clean environment (no SHOAL_* or proxy variables of
the caller), and a readiness wait on `/healthz` that fails as soon as the process exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
SHOAL = Path(sys.executable).parent / "shoal"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def server_env(home: Path, **settings: str) -> dict[str, str]:
    """The caller's environment without its SHOAL_* and proxy variables, with a home, a free
    port and `settings` (SHOAL_* names) on top."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SHOAL_") and k not in ("HTTP_PROXY", "HTTPS_PROXY")
    }
    env.update(SHOAL_HOME=str(home), SHOAL_PORT=str(free_port()), **settings)
    return env


def cpu_seconds(pid: int) -> float:
    """The process's CPU time, with its waited-for children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


class Server:
    """One `shoal server` process in its own process group."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home = home
        self.env = env
        self.port = int(env["SHOAL_PORT"])
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready = False
        """Answering (started and not killed since)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def launch(self) -> None:
        """Start the process; `wait_ready` waits for it to answer."""
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / "server.log", "ab") as log:
            self.proc = subprocess.Popen(
                [str(SHOAL), "server", "--log-level", "warning"],
                env=self.env,
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, limit_s: float = 180.0) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: see {self.home / 'server.log'}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/healthz", timeout=2.0).status_code == 200:
                    self.ready = True
                    return
            time.sleep(0.1)
        raise RuntimeError(f"server did not start: see {self.home / 'server.log'}")

    def start(self, limit_s: float = 180.0) -> None:
        """Start the process and wait until it answers."""
        self.launch()
        self.wait_ready(limit_s)

    def kill(self) -> None:
        """`kill -9` of the whole process group."""
        self.ready = False
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, grace_s: float = 60.0) -> None:
        """SIGTERM, then a kill if it has not stopped within `grace_s`."""
        self.ready = False
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.kill()

"""A stand-in for Shoal's metadata and signal endpoints, on loopback, for agent-chain tests.

It serves a server's deployments at `/metadata` in Heat's shape (built by `server_metadata`,
exactly what the API serves) and records what heat-config-notify POSTs to `/signal/<run id>`.
Runs in a thread so the agents (other processes) can reach it while a test awaits.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from shoal.model.heat_agent import default_config_id, parse_signal, server_metadata
from shoal.model.software import DeploymentSignal, ResolvedDeployment
from tests.support.polling import until


@dataclass
class AgentStub:
    """What the test serves (`deployments`) and what came back (`signals`, by run id)."""

    base_url: str = ""
    server_id: str = "srv"
    deployments: list[ResolvedDeployment] = field(default_factory=list)
    signals: list[tuple[str, DeploymentSignal]] = field(default_factory=list)
    metadata_gets: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def metadata_url(self) -> str:
        return f"{self.base_url}/metadata"

    def signal_url(self, r: ResolvedDeployment) -> str:
        return f"{self.base_url}/signal/{default_config_id(r)}?secret=not-logged"

    def metadata(self) -> dict[str, Any]:
        with self.lock:
            current = list(self.deployments)
        return server_metadata(current, self.signal_url, server_id=self.server_id)

    def signals_for(self, r: ResolvedDeployment) -> list[DeploymentSignal]:
        run = default_config_id(r)
        with self.lock:
            return [s for run_id, s in self.signals if run_id == run]

    async def wait_signal(self, r: ResolvedDeployment) -> DeploymentSignal:
        """The first signal for `r`'s run, polled with a generous deadline."""
        found = await until(
            lambda: self.signals_for(r),
            lambda: (
                f"a signal for {r.deployment} ({r.action}); {self.metadata_gets} metadata "
                f"requests, signals: {self.signals}"
            ),
            every_s=0.05,
        )
        return found[0]


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer

    def do_HEAD(self) -> None:
        # No Last-Modified: the request collector then always GETs and compares contents.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()

    def do_GET(self) -> None:
        stub = self.server.stub
        if self.path != "/metadata":
            self._reply(404, b"{}")
            return
        with stub.lock:
            stub.metadata_gets += 1
        self._reply(200, json.dumps(stub.metadata()).encode())

    def do_POST(self) -> None:
        stub = self.server.stub
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        path = self.path.split("?", 1)[0]
        if not path.startswith("/signal/"):
            self._reply(404, b"{}")
            return
        signal = parse_signal(body)
        with stub.lock:
            stub.signals.append((path.removeprefix("/signal/"), signal))
        self._reply(200, b"{}")

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: polls every second would fill the test output."""


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, stub: AgentStub) -> None:
        self.stub = stub
        super().__init__(("127.0.0.1", 0), _Handler)


@contextmanager
def agent_stub() -> Iterator[AgentStub]:
    stub = AgentStub()
    server = _StubServer(stub)
    stub.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

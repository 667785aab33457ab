"""Shoal servers as real processes for end-to-end tests, and the HTTP helpers that drive them.

A `ServerProcess` runs `tests/support/serve.py` in its own process group with a private
`SHOAL_*` environment, waits for `GET /healthz`, and reads the admin token the server wrote to
`$SHOAL_HOME/admin-token`. `kill()` is kill -9 of the whole group (a crash); `stop()` asks
politely first. Nodes of the local provider run in their own sessions and outlive a server,
so `sweep_local_nodes` SIGKILLs any that a test left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import containers, isolation, podman
from tests.support.polling import eventually as eventually  # re-exported for server tests
from tests.support.ports import free_port as free_port

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
SERVE = Path(__file__).resolve().parent / "serve.py"

TERMINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
START_TIMEOUT_S = 180.0
ACTION_TIMEOUT_S = 300.0


def healthy(url: str) -> bool:
    """Whether the server at `url` answers `GET /healthz` now."""
    try:
        return httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200
    except httpx.TransportError:
        return False


def wait_healthy(
    url: str, proc: subprocess.Popen[Any], log: Path, timeout_s: float = START_TIMEOUT_S
) -> None:
    """Until the server at `url` answers `GET /healthz`; fail with its log if its process ends
    first or the time runs out (for servers a test starts itself, e.g. `shoal server`)."""

    def up() -> bool:
        assert proc.poll() is None, log.read_text()
        return healthy(url)

    eventually(up, timeout_s=timeout_s, every_s=0.05, what=log.read_text)


class ServerProcess:
    """One `serve.py` process with its own environment; start, crash, stop."""

    def __init__(self, home: Path, env: Mapping[str, str], log: Path) -> None:
        self.home = home
        self.env = dict(env)
        self.log = log
        self.port = int(self.env["SHOAL_PORT"])
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return (self.home / "admin-token").read_text().strip()

    def start(self) -> ServerProcess:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(SERVE)],
                env=self.env,
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        proc = self.proc

        def up() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}:\n{self.log_tail()}")
            return healthy(self.url)

        try:
            eventually(up, timeout_s=START_TIMEOUT_S, every_s=0.05, what="/healthz to answer")
        except AssertionError:
            self.kill()
            raise RuntimeError(f"server did not answer /healthz:\n{self.log_tail()}") from None
        return self

    def kill(self) -> None:
        """kill -9 the server's process group, as a crash would; waits until it is gone."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM (uvicorn shuts down, the engine stops), then SIGKILL if it lingers."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        except ProcessLookupError:
            return
        self.kill()

    def client(self, token: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token or self.token}"},
            timeout=30.0,
        )

    def log_tail(self, max_bytes: int = 4000) -> str:
        try:
            return self.log.read_bytes()[-max_bytes:].decode(errors="replace")
        except OSError:
            return ""


def server_env(
    home: Path,
    *,
    port: int,
    provider: str = "local",
    provider_options: Mapping[str, Any] | None = None,
    database_url: str | None = None,
    lease_s: float = 2.0,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The server's environment: ours without any SHOAL_* variable, then its own settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
    env["PYTHONPATH"] = os.pathsep.join(
        dict.fromkeys([str(SRC), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    )
    env.update(
        SHOAL_HOME=str(home),
        SHOAL_CONFIG=str(home / "shoal.toml"),
        SHOAL_PORT=str(port),
        SHOAL_PROVIDER=provider,
        SHOAL_PROVIDER_OPTIONS=json.dumps(dict(provider_options or {})),
        SHOAL_LEASE_S=str(lease_s),
        SHOAL_RETRY_BACKOFF_S="0.2",
    )
    if database_url:
        env["SHOAL_DATABASE_URL"] = database_url
    env.update(extra or {})
    return env


def sweep_local_nodes(home: Path) -> None:
    """SIGKILL every node process the local provider under `home` recorded and left running,
    and remove the networks of its nodes (issue 39)."""
    sweep_provider_home(home / "local")


def sweep_provider_home(provider_home: Path) -> None:
    """SIGKILL every node and agent-chain process a local provider's own home (its `resources`
    beside its `slots`) recorded and left running, and remove its nodes' networks (issue 39)."""
    for path in (provider_home / "resources").glob("*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        key = data.get("key", "")
        for pid in (data.get("pid"), data.get("agent_pid")):
            if isinstance(pid, int) and key and _carries(pid, key):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
    _remove_containers(provider_home)
    isolation.remove_home(provider_home)


def _remove_containers(provider_home: Path) -> None:
    """Every container and pod the home's nodes ran: their conmon outlives the node's
    process (as it outlives Shoal), so killing the node leaves them running."""
    stores = list((provider_home / "nodes").glob("*/podman"))
    if not stores:
        return
    try:
        found = podman.Podman.find()
    except podman.PodmanMissingError:
        return
    for store in stores:
        containers.remove_all(found, podman.Store(store))


def release_local_homes(root: Path) -> None:
    """Sweep every local provider's home under `root` and drop its address slots, so the
    machine-wide claims on its loopback addresses lapse (providers/local/slots.py) and the
    tests after this one, in this process or another, find the addresses free: a test's
    directory outlives it, and a home left with its slots would hold them until pytest removes
    it sessions later."""
    for slots in root.rglob("slots"):
        provider_home = slots.parent
        if slots.is_dir() and (provider_home / "resources").is_dir():
            sweep_provider_home(provider_home)
            shutil.rmtree(slots, ignore_errors=True)


def _carries(pid: int, key: str) -> bool:
    try:
        return key.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def pid_gone(pid: int) -> bool:
    """True once `os.kill(pid, 0)` fails: no such process (a zombie still counts as there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


# -- HTTP helpers ---------------------------------------------------------------------------


def wait_action(client: httpx.Client, location: str, timeout_s: float = ACTION_TIMEOUT_S) -> Any:
    """GET `location` until the action ends; its body (`{"action", "children"}`)."""

    last: list[Any] = [None]

    def done() -> Any:
        r = client.get(location)
        assert r.status_code == 200, r.text
        last[0] = body = r.json()
        return body if body["action"]["status"] in TERMINAL else None

    try:
        return eventually(done, timeout_s=timeout_s)
    except AssertionError:
        raise AssertionError(f"action did not end within {timeout_s}s: {last[0]}") from None


def wait_ok(client: httpx.Client, response: httpx.Response) -> Any:
    """A 202's action, waited for; it must have SUCCEEDED."""
    assert response.status_code == 202, response.text
    location = response.headers["Location"]
    body = wait_action(client, location)
    assert body["action"]["status"] == "SUCCEEDED", body
    return body


def assert_error(response: httpx.Response, status: int, code: str | None = None) -> Any:
    """`response` is `status` with exactly Shoal's error shape; its `error` object."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "title", "message", "details"}, error
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["title"], str) and error["title"]
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], list), error
    for d in error["details"]:
        assert set(d) >= {"path", "message"}, d
    if code is not None:
        assert error["code"] == code, error
    return error

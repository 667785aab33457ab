"""A real Keystone on loopback, and Shoal in keystone mode in front of it.

The Keystone venv (keystone==30.0.0 + uwsgi) is installed on first use under a cache dir
(`SHOAL_TEST_CACHE`, default ~/.cache/shoal-tests) and reused afterwards; it lives in its own venv
because Keystone pins its own versions of half of OpenStack. So does the `openstack` CLI with the
senlinclient plugin (`osc_venv`, in `osc-clients` next to it). Each session gets fresh Keystone
state: config from keystone.conf.tmpl, fernet/credential keys, db_sync and bootstrap, then uwsgi
with `--http11-socket` (HTTP/1.0 breaks reused connections) on a free port. `catalog` puts the
session's Shoal into its catalog as the `clustering` service, with `shoal keystone register`.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import os
import pwd
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from shoal.api.app import create_app
from shoal.runtime import Runtime
from shoal.settings import Settings
from tests.support.server import free_port
from tests.support.venvs import cache_root, cached_venv

HERE = Path(__file__).resolve().parent
KEYSTONE_PINS = ("keystone==30.0.0", "uwsgi")
# senlinclient 3.1.0 formats list columns with lambdas, which osc-lib 4 rejects on non-empty
# lists; python-openstackclient 8 needs osc-lib 4.
OSC_PINS = ("python-openstackclient<8", "osc-lib<4", "python-senlinclient==3.1.0")
ADMIN_PASSWORD = "secretadmin"
SERVICE_PASSWORD = "secretservice"
USER_PASSWORD = "secretuser"
WAIT_S = 60


def cache_dir() -> Path:
    return cache_root() / "keystone-30"


def keystone_venv() -> Path:
    """The venv with Keystone and uwsgi; installed (under a file lock) if missing."""
    return cached_venv(cache_dir(), KEYSTONE_PINS)


def osc_venv() -> Path:
    """The venv with the `openstack` CLI and the senlinclient plugin; installed if missing."""
    return cached_venv(cache_root() / "osc-clients", OSC_PINS)


@dataclass
class Keystone:
    venv: Path
    state: Path
    port: int
    proc: subprocess.Popen[bytes] | None = None
    admin_token: str = ""
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v3"

    def manage(self, *args: str) -> None:
        conf = self.state / "keystone.conf"
        subprocess.run(
            [str(self.venv / "bin" / "keystone-manage"), "--config-file", str(conf), *args],
            check=True,
            capture_output=True,
        )

    def setup(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        tmpl = (HERE / "keystone.conf.tmpl").read_text()
        (self.state / "keystone.conf").write_text(tmpl.replace("@STATE@", str(self.state)))
        user = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(os.getgid()).gr_name
        self.manage("fernet_setup", "--keystone-user", user, "--keystone-group", group)
        self.manage("credential_setup", "--keystone-user", user, "--keystone-group", group)
        self.manage("db_sync")
        self.manage(
            "bootstrap",
            "--bootstrap-password",
            ADMIN_PASSWORD,
            "--bootstrap-admin-url",
            self.url,
            "--bootstrap-internal-url",
            self.url,
            "--bootstrap-public-url",
            self.url,
            "--bootstrap-region-id",
            "RegionOne",
        )

    def start(self) -> None:
        log = open(self.state / "uwsgi.log", "wb")  # noqa: SIM115 - lives as long as uwsgi
        env = {**os.environ, "OS_KEYSTONE_CONFIG_DIR": str(self.state)}
        self.proc = subprocess.Popen(
            [
                str(self.venv / "bin" / "uwsgi"),
                "--http11-socket",
                f"127.0.0.1:{self.port}",
                "--wsgi",
                "keystone.wsgi.api:application",
                "--master",
                "--processes",
                "1",
                "--threads",
                "4",
                "--enable-threads",
                "--lazy-apps",
                "--die-on-term",
                "--need-app",
                "--buffer-size",
                "65535",
                "--env",
                f"OS_KEYSTONE_CONFIG_DIR={self.state}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + WAIT_S
        while True:
            assert self.proc.poll() is None, (self.state / "uwsgi.log").read_text()[-3000:]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url, timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "keystone did not come up"
            time.sleep(0.1)
        self.admin_token = self.token("admin", ADMIN_PASSWORD, "admin")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(15)

    def token(self, user: str, password: str, project: str) -> str:
        body = {
            "auth": {
                "identity": {
                    "methods": ["password"],
                    "password": {
                        "user": {"name": user, "domain": {"id": "default"}, "password": password}
                    },
                },
                "scope": {"project": {"name": project, "domain": {"id": "default"}}},
            }
        }
        r = httpx.post(f"{self.url}/auth/tokens", json=body, timeout=30)
        assert r.status_code == 201, r.text
        return r.headers["X-Subject-Token"]

    def admin(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        r = httpx.request(
            method,
            f"{self.url}{path}",
            headers={"X-Auth-Token": self.admin_token},
            timeout=30,
            **kw,
        )
        assert r.status_code < 300, r.text
        out: dict[str, Any] = r.json() if r.content else {}
        return out

    def role_id(self, name: str) -> str:
        roles = self.admin("GET", f"/roles?name={name}")["roles"]
        if roles:
            return str(roles[0]["id"])
        return str(self.admin("POST", "/roles", json={"role": {"name": name}})["role"]["id"])

    def project_with_user(self, project: str, user: str, password: str, role: str) -> str:
        pid = self.admin("POST", "/projects", json={"project": {"name": project}})["project"]["id"]
        uid = self.admin(
            "POST",
            "/users",
            json={"user": {"name": user, "password": password, "default_project_id": pid}},
        )["user"]["id"]
        self.admin("PUT", f"/projects/{pid}/users/{uid}/roles/{self.role_id(role)}")
        return str(pid)


@pytest.fixture(scope="session")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keystone]:
    ks = Keystone(keystone_venv(), tmp_path_factory.mktemp("keystone"), free_port())
    ks.setup()
    ks.start()
    try:
        ks.ids["service"] = ks.project_with_user("service", "senlin", SERVICE_PASSWORD, "service")
        ks.ids["alpha"] = ks.project_with_user("alpha", "alice", USER_PASSWORD, "member")
        ks.ids["beta"] = ks.project_with_user("beta", "bob", USER_PASSWORD, "member")
        ks.ids["admin"] = ks.admin("GET", "/projects?name=admin")["projects"][0]["id"]
        yield ks
    finally:
        ks.stop()


class KeystoneShoal:
    """Shoal (sim provider, in memory) under uvicorn in a thread, in keystone mode."""

    def __init__(self, home: Path, keystone: Keystone) -> None:
        self.settings = Settings(
            home=home,
            provider="sim",
            provider_options={"state_path": "memory"},
            manage=False,
            retry_backoff_s=0.0,
            auth="keystone",
            keystone_url=keystone.url,
            keystone_user="senlin",
            keystone_password=SERVICE_PASSWORD,
            keystone_project="service",
        )
        self.port = free_port()
        self.server: uvicorn.Server | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="shoal-keystone", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        async def main() -> None:
            runtime = await Runtime.open(self.settings)
            config = uvicorn.Config(
                create_app(runtime, run_engine=True),
                host="127.0.0.1",
                port=self.port,
                log_level="warning",
                lifespan="on",
            )
            self.server = uvicorn.Server(config)
            try:
                await self.server.serve()
            finally:
                await runtime.close()

        try:
            asyncio.run(main())
        except BaseException as e:
            self.error = e

    def start(self) -> KeystoneShoal:
        self.thread.start()
        deadline = time.monotonic() + WAIT_S
        while not (self.server is not None and self.server.started):
            assert self.error is None, self.error
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive(), "uvicorn did not stop"
        assert self.error is None, self.error


@pytest.fixture(scope="session")
def shoal(keystone: Keystone, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneShoal]:
    server = KeystoneShoal(tmp_path_factory.mktemp("shoal-home"), keystone).start()
    try:
        yield server
    finally:
        server.stop()


def register_clustering(
    keystone: Keystone, endpoint: str, *more: str
) -> subprocess.CompletedProcess[str]:
    """`shoal keystone register`, as an operator runs it, for `endpoint` (and `more` options)."""
    args = [
        sys.executable,
        "-m",
        "shoal",
        "keystone",
        "register",
        "--url",
        keystone.url,
        "--admin-password",
        ADMIN_PASSWORD,
        "--endpoint",
        endpoint,
        *more,
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session")
def catalog(keystone: Keystone, shoal: KeystoneShoal) -> str:
    """The session's Shoal in Keystone's catalog as `clustering`; its endpoint."""
    endpoint = f"{shoal.url}/clustering"
    done = register_clustering(keystone, endpoint)
    assert done.returncode == 0, done.stdout + done.stderr
    return endpoint

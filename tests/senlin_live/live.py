"""Real Senlin 16 running: its API, engine, conductor and health manager as separate processes
from Senlin's cached venv, over a fresh MariaDB database (`db_sync` by `senlin-manage`), the
machine's RabbitMQ, the project's real Keystone (tests/keystone) and the project's Nova harness
(tests/nova) registered in Keystone's catalog as `compute`.

Senlin's engine reaches Nova the way it does in production: with a Keystone trust that its
API's trust middleware created for the calling user, a trust-scoped token, and the `compute`
endpoint from that token's catalog (the Nova harness ignores the token and acts as its
project's admin). Each harness gets its own oslo.messaging `control_exchange`, so two test runs
sharing the broker never answer each other's RPC calls.

Glance is not in the cloud (the Nova harness's image service is in-process), so profiles boot
from a block-device mapping of the image instead of naming `image`: Senlin's profile validates
an image by name through Glance, but passes a mapping to Nova unchanged.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.keystone.conftest import SERVICE_PASSWORD, Keystone, KeystoneShoal
from tests.senlin_import.harness import MARIADB, _admin
from tests.senlin_import.venv import senlin_venv
from tests.support.server import free_port

START_S = 240.0
"""Generous: four eventlet services importing half of OpenStack on a loaded 2-core machine."""
SERVICES = ("senlin-engine", "senlin-conductor", "senlin-health-manager")

LAUNCH = """import sys
import senlin.cmd.{module} as service
from senlin.engine import environment
for namespace in ("senlin.profiles", "senlin.policies", "senlin.drivers", "senlin.endpoints"):
    environment._get_mapping(namespace)
sys.argv[0] = "{name}"
sys.exit(service.main())
"""
"""A Senlin service as its console script starts it, after importing every plugin Senlin's
environment loads. Senlin's engine loads them lazily, on its first action, and two actions
starting together both import `senlin.drivers.os` under eventlet: the second saw the module half
made and the node's create failed with "partially initialized module 'senlin.drivers.os' has no
attribute 'compute'" (a CI run, 2026-12-03), leaving the node CREATING. Importing once, before
the service takes work, is what the conductor already does (`environment.initialize()` at start);
`senlin.cmd` monkey-patches first, as the console script does."""

CONF = """[DEFAULT]
debug = true
log_dir = {state}
transport_url = rabbit://guest:guest@127.0.0.1:5672/
control_exchange = {exchange}
default_action_timeout = 600
default_nova_timeout = 300
periodic_interval = 60
batch_interval = 0
lock_retry_interval = 1
# oslo.messaging's default 60 s for an RPC answer: at load 20 Senlin's engine answered a node
# read later than that, and its API gave a 500 ("Timed out waiting for a reply").
rpc_response_timeout = 600
event_dispatchers = database

[database]
connection = {db_url}
# Senlin 16 on this machine's libraries (SQLAlchemy 2.1, oslo.db 18) leaks connections: watched
# in MariaDB's process list during a run, the oracle's Senlin held about one more idle connection
# every 5 s (57 after five minutes), until its pool (5 + 50, then 5 + 40) ran out and an action
# read answered 500 "QueuePool limit ... reached" (in 3 of 5 runs, at any load). The pool is
# therefore unbounded (oslo.db's max_pool_size = 0); a run lasts minutes, well under MariaDB's
# 151 connections, and the processes end with the test.
max_pool_size = 0
pool_timeout = 120

[senlin_api]
bind_host = 127.0.0.1
bind_port = {port}
workers = 1
api_paste_config = {paste}

[receiver]
host = 127.0.0.1
port = {port}

[engine]
workers = 1
threads = 10

[conductor]
workers = 1
threads = 10

[health_manager]
workers = 1

[authentication]
auth_url = {ks}
service_username = senlin
service_password = {password}
service_project_name = service
service_user_domain = Default
service_project_domain = Default

[keystone_authtoken]
www_authenticate_uri = {ks}
auth_url = {ks}
auth_type = password
username = senlin
password = {password}
project_name = service
user_domain_name = Default
project_domain_name = Default
service_token_roles_required = false

[oslo_messaging_notifications]
driver = noop

[oslo_concurrency]
lock_path = {state}/locks
"""


@dataclass
class LiveSenlin:
    """One Senlin deployment; `url` is its clustering endpoint (the API root)."""

    state: Path
    keystone: Keystone
    db_name: str = field(default_factory=lambda: f"senlin_live_{uuid.uuid4().hex[:8]}")
    port: int = field(default_factory=free_port)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def db_url(self) -> str:
        host, port, user = MARIADB["host"], MARIADB["port"], MARIADB["user"]
        return f"mysql+pymysql://{user}@{host}:{port}/{self.db_name}"

    @property
    def conf(self) -> Path:
        return self.state / "senlin.conf"

    def setup(self) -> None:
        venv = senlin_venv()
        self.state.mkdir(parents=True, exist_ok=True)
        (self.state / "locks").mkdir(exist_ok=True)
        self.conf.write_text(
            CONF.format(
                state=self.state,
                exchange=f"senlin-{self.db_name}",
                db_url=self.db_url,
                port=self.port,
                paste=venv / "etc" / "senlin" / "api-paste.ini",
                ks=self.keystone.url,
                password=SERVICE_PASSWORD,
            )
        )
        _admin(f"CREATE DATABASE `{self.db_name}` CHARACTER SET utf8mb4")
        subprocess.run(
            [str(venv / "bin" / "senlin-manage"), "--config-file", str(self.conf), "db_sync"],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def _spawn(self, name: str) -> None:
        log = open(self.state / f"{name}.out", "wb")  # noqa: SIM115 - the child keeps it
        self.procs[name] = subprocess.Popen(
            [
                str(senlin_venv() / "bin" / "python"),
                "-c",
                LAUNCH.format(module=name.removeprefix("senlin-").replace("-", "_"), name=name),
                "--config-file",
                str(self.conf),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(self.state),
        )
        log.close()

    def start(self) -> None:
        """The three RPC services first, then the API; back when the API answers and the
        engine has registered itself in Senlin's `service` table."""
        for name in (*SERVICES, "senlin-api"):
            self._spawn(name)
        deadline = time.monotonic() + START_S
        while not self._answers():
            for name, proc in self.procs.items():
                assert proc.poll() is None, f"{name} exited:\n{self.log_tail(name)}"
            assert time.monotonic() < deadline, f"senlin-api did not answer:\n{self.logs()}"
            time.sleep(0.5)

    def ensure_running(self) -> None:
        """Start it again if a test stopped it (the import test does, as an operator would)."""
        if any(p.poll() is not None for p in self.procs.values()):
            self.stop()
            self.procs.clear()
            self.start()

    def _answers(self) -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(self.url, timeout=5).status_code in (200, 300)
        return False

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)

    def drop(self) -> None:
        _admin(f"DROP DATABASE IF EXISTS `{self.db_name}`")

    def log_tail(self, name: str, n: int = 3000) -> str:
        texts = []
        for path in (self.state / f"{name}.out", self.state / f"{name}.log"):
            if path.exists():
                texts.append(path.read_text(errors="replace")[-n:])
        return "\n".join(texts)

    def logs(self) -> str:
        return "\n".join(f"--- {n}\n{self.log_tail(n)}" for n in (*SERVICES, "senlin-api"))


def register_service(keystone: Keystone, kind: str, url: str) -> None:
    """A service of the cloud in Keystone's catalog, where Senlin's engine looks (`compute`:
    the Nova harness; `image`: its images, Glance-shaped)."""
    svc = keystone.admin("POST", "/services", json={"service": {"name": kind, "type": kind}})
    for interface in ("public", "internal", "admin"):
        endpoint = {
            "service_id": svc["service"]["id"],
            "interface": interface,
            "url": url,
            "region_id": "RegionOne",
        }
        keystone.admin("POST", "/endpoints", json={"endpoint": endpoint})


class ShoalOnNova(KeystoneShoal):
    """Shoal in Keystone mode (tokens validated by the same Keystone as Senlin's) whose
    provider is the same Nova harness Senlin's engine booted its servers in."""

    def __init__(self, home: Path, keystone: Keystone, nova_url: str) -> None:
        super().__init__(home, keystone)
        self.settings = self.settings.model_copy(
            update={
                "provider": "openstack",
                "provider_options": {
                    "auth_type": "none",
                    "compute_endpoint": nova_url,
                    "network": "none",
                },
                "keystone_timeout_s": 120.0,
            }
        )

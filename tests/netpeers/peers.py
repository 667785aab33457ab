"""A real Neutron and a real Octavia on loopback, for the openstack provider's network tests
and the `openstack-create-delete` benchmark.

Neutron 29 and Octavia 19 (the same OpenStack cycle as the Nova 34 and Cinder 29 peers) each run
in their own venv, built on first use under the test cache (`SHOAL_TEST_CACHE`, default
~/.cache/shoal-tests) and reused; each run gets fresh MariaDB databases (127.0.0.1:3306, root)
that are dropped afterwards. `neutron_serve.py` and `octavia_serve.py` say what is real in each
and what is not.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pymysql

from tests.nova.conftest import NOVA_PROJECT, Peer, start_peer
from tests.support.server import free_port
from tests.support.venvs import cache_root, cached_venv

HERE = Path(__file__).resolve().parent
MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root"}
# PyMySQL: the drivers of the databases below. SQLAlchemy<2.1 as in the other peer venvs.
NEUTRON_PINS = ("neutron==29.0.0", "SQLAlchemy<2.1", "PyMySQL")
OCTAVIA_PINS = ("octavia==19.0.0", "SQLAlchemy<2.1", "PyMySQL")


def neutron_venv() -> Path:
    return cached_venv(cache_root() / "neutron-29", NEUTRON_PINS)


def octavia_venv() -> Path:
    return cached_venv(cache_root() / "octavia-19", OCTAVIA_PINS)


def _admin(sql: str) -> None:
    conn = pymysql.connect(**MARIADB, autocommit=True)  # type: ignore[arg-type,unused-ignore]
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


@dataclass
class NetCloud:
    neutron: Peer
    octavia: Peer

    def provider_options(self) -> dict[str, str | float]:
        """`make_provider("openstack", options=...)` for these two (no Nova behind)."""
        return {
            "auth_type": "none",
            "compute_endpoint": "http://127.0.0.1:9/v2.1",
            "network_endpoint": self.neutron.url,
            "load_balancer_endpoint": self.octavia.url,
            "poll_interval_s": 0.25,
            "boot_timeout_s": 300.0,
        }


def _start(kind: str, python: Path, tmp: Path, db: str) -> Peer:
    _admin(f"CREATE DATABASE `{db}`")
    state = tmp / kind
    state.mkdir()
    args = [
        "--port",
        str(free_port()),
        "--db-url",
        f"mysql+pymysql://root@127.0.0.1:3306/{db}",
        "--state-dir",
        str(state),
        "--schema-cache",
        str(python.parent.parent.parent / "schema.sql"),
    ]
    if kind == "neutron":
        # Nova's project (tests/nova): Nova boots a server only on a port of the server's project.
        args += ["--project", NOVA_PROJECT]
    return start_peer(python, HERE / f"{kind}_serve.py", args, tmp / f"{kind}.log")


@contextlib.contextmanager
def net_cloud(tmp: Path) -> Iterator[NetCloud]:
    """Both services started side by side (each takes tens of seconds on a loaded machine)."""
    run = uuid.uuid4().hex[:10]
    dbs = {"neutron": f"shoal_neutron_{run}", "octavia": f"shoal_octavia_{run}"}
    with ThreadPoolExecutor(2) as pool:
        venvs = {"neutron": pool.submit(neutron_venv), "octavia": pool.submit(octavia_venv)}
        started = {
            kind: pool.submit(_start, kind, venvs[kind].result() / "bin" / "python", tmp, db)
            for kind, db in dbs.items()
        }
        peers: dict[str, Peer] = {}
        errors: list[BaseException] = []
        for kind, fut in started.items():
            try:
                peers[kind] = fut.result()
            except BaseException as e:
                errors.append(e)
    try:
        if errors:
            raise errors[0]
        yield NetCloud(peers["neutron"], peers["octavia"])
    finally:
        for peer in peers.values():
            peer.stop()
        for db in dbs.values():
            with contextlib.suppress(pymysql.MySQLError):
                _admin(f"DROP DATABASE IF EXISTS `{db}`")

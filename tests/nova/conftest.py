"""A real Nova and a real Cinder on loopback for the openstack provider's tests.

Nova 34 + Placement 16 and Cinder 29 (the same OpenStack cycle) each run in their own venv
(they pin their own OpenStack libraries, and SQLAlchemy<2.1), installed on first use under the
test cache (`SHOAL_TEST_CACHE`, default ~/.cache/shoal-tests) and reused afterwards.
`cloud.py` runs Nova's functional-test harness with fake-virt computes on a free port;
`../cinder_peer/serve.py` runs Cinder's API, scheduler and volume service with its fake driver,
and Nova attaches volumes through it (see both scripts' docstrings).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
from tests.support.server import free_port
from tests.support.venvs import cache_root, cached_venv

HERE = Path(__file__).resolve().parent
NOVA_PINS = (
    "nova==34.0.0",
    "openstack-placement==16.0.0",
    "fixtures",
    "testtools",
    "wsgi-intercept",
    "oslotest",
    "stestr",
    "ddt",
    "testscenarios",
    "SQLAlchemy<2.1",  # 2.1 deprecates noload(); the harness turns that warning into errors
)
CINDER_PINS = ("cinder==29.0.0", "fixtures", "SQLAlchemy<2.1")
NOVA_PROJECT = "6f70656e737461636b20342065766572"
"""The harness's project id; Cinder serves the same project so Nova's calls land in it."""
START_TIMEOUT_S = 180.0


# The harness's ConfFixture looks for api-paste.ini under <site-packages>/etc/nova; the wheel
# installs it under <venv>/etc/nova.
_LINK_PASTE = """
import os, sys, sysconfig
sp = sysconfig.get_paths()["purelib"]
os.makedirs(os.path.join(sp, "etc"), exist_ok=True)
link = os.path.join(sp, "etc", "nova")
if not os.path.exists(link):
    os.symlink(os.path.join(sys.prefix, "etc", "nova"), link)
"""


def nova_venv() -> Path:
    return cached_venv(cache_root() / "nova-34", NOVA_PINS, _LINK_PASTE)


@dataclass
class Peer:
    """A service process started from a peer venv, answering at `url`."""

    proc: subprocess.Popen[str]
    url: str
    project: str
    log: Path

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(15)

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else ""


def start_peer(python: Path, script: Path, args: list[str], log: Path) -> Peer:
    """Run `script` and wait for its `READY <url> [project]` line; the rest goes to `log`."""
    proc = subprocess.Popen(
        [str(python), str(script), *args],
        stdout=subprocess.PIPE,
        stderr=open(log, "w"),  # noqa: SIM115 - the child keeps it
        text=True,
        start_new_session=True,
        cwd=str(script.parent),
    )
    assert proc.stdout is not None
    found: list[str] = []

    def read(stream: IO[str]) -> None:
        for line in stream:
            if line.startswith("READY ") and not found:
                found.append(line.split(maxsplit=1)[1].strip())

    threading.Thread(target=read, args=(proc.stdout,), daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not found:
        if proc.poll() is not None or time.monotonic() > deadline:
            peer = Peer(proc, "", "", log)
            peer.stop()
            raise AssertionError(f"{script.name} did not start:\n{peer.log_tail()}")
        time.sleep(0.1)
    url, _, project = found[0].partition(" ")
    return Peer(proc, url, project, log)


def cinder_venv() -> Path:
    return cached_venv(cache_root() / "cinder-29", CINDER_PINS)


def start_cinder(tmp: Path) -> Peer:
    python = cinder_venv() / "bin" / "python"
    port = free_port()
    state = tmp / f"cinder-{port}"
    state.mkdir()
    args = ["--port", str(port), "--project", NOVA_PROJECT, "--state-dir", str(state)]
    return start_peer(python, HERE.parent / "cinder_peer" / "serve.py", args, tmp / "cinder.log")


def start_nova(tmp: Path, *, hosts: int, zones: int, extra: list[str] | None = None) -> Peer:
    python = nova_venv() / "bin" / "python"
    port = free_port()
    args = ["--port", str(port), "--hosts", str(hosts), "--zones", str(zones), *(extra or [])]
    return start_peer(python, HERE / "cloud.py", args, tmp / f"nova-{port}.log")


@pytest.fixture(scope="module")
def nova(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """Nova alone, 6 hosts in 2 zones (az1: host001, 003, 005; az2: host002, 004, 006)."""
    peer = start_nova(tmp_path_factory.mktemp("nova"), hosts=6, zones=2)
    try:
        yield peer
    finally:
        peer.stop()


@dataclass
class Cloud:
    nova: Peer
    cinder: Peer
    tenant_url: str
    """Nova's API for a plain member of the project."""


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cloud]:
    """Nova (6 hosts, 2 zones, as `nova`) attaching volumes from a real Cinder."""
    tmp = tmp_path_factory.mktemp("cloud")
    cinder = start_cinder(tmp)
    try:
        tenant_port = free_port()
        extra = ["--cinder", cinder.url, "--tenant-port", str(tenant_port)]
        nova = start_nova(tmp, hosts=6, zones=2, extra=extra)
        try:
            yield Cloud(nova, cinder, f"http://127.0.0.1:{tenant_port}/v2.1")
        finally:
            nova.stop()
    finally:
        cinder.stop()

"""`kill -9` at chosen moments of drive.py's create and delete (benchmarks/chaos.py's drill,
for a cluster's network side): the process is killed as soon as a condition on the services'
own listings holds, so the kill lands mid-work whatever the machine's speed. Used by
benchmarks/networks.py's `openstack-create-delete`; the tests interrupt deterministically
instead (test_openstack_networks.py's `DiesAt`), which costs seconds, not minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.netpeers.peers import NetCloud

ROOT = Path(__file__).resolve().parents[2]


def drive_process(action: str, cluster: str, cloud: NetCloud) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.netpeers.drive",
            action,
            cluster,
            cloud.neutron.url,
            cloud.octavia.url,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_when(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> bool:
    """`kill -9` the process as soon as `ready()`; False if it finished first."""
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait(60)
            return True
        time.sleep(0.05)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    return False


def finish(proc: subprocess.Popen[str]) -> None:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0 and "DONE" in out, err[-3000:]


def at_least(count: Callable[[], int], n: int) -> bool:
    return count() >= n

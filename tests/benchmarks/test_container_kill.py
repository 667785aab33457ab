"""`benchmarks/container_kill.py` at a test's size (issue 36): two replicas' containers killed on
`local` with real podman; the scenario's line has the keys outside checks rely on, and every
killed replica came back (restarted, ready, answering). Times are printed, never asserted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shoal.providers.local import images

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "container_kill.py"


def test_two_kills_come_back() -> None:
    if not shutil.which("podman") or not images.BUSYBOX.exists():
        pytest.skip("needs podman, runc and busybox-static (apt-get install ...)")
    run = subprocess.run(
        [sys.executable, str(BENCH), "--kills", "2"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    assert len(lines) == 1
    line = lines[0]
    assert line["scenario"] == "local-container-kill"
    assert {"median_s", "max_s", "kills", "times_s"} <= set(line)
    assert line["kills"] == 2 and len(line["times_s"]) == 2
    assert line["restarts"] >= 2  # each killed replica was restarted, then read ready
    print(line)


def test_bad_kill_counts_are_refused() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--kills", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode != 0 and "kills must be 1..40" in run.stderr

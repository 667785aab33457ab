"""`benchmarks/transitions.py` at a test's size (issue 36): every scenario prints its line with
the keys outside checks rely on; the sim fuzz ran its transitions with no divergence and no
orphan; on a machine with podman, seed 003's conversions ended with nothing of the other shape
left."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "transitions.py"


def test_every_scenario_line_at_a_small_size() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--steps", "8", "--clusters", "4", "--kills", "1"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = {
        line["scenario"]: line
        for line in (json.loads(x) for x in run.stdout.splitlines() if x.startswith("{"))
    }
    fuzz = lines["sim-transition-fuzz"]
    assert fuzz["steps"] >= 8 and fuzz["divergences"] == 0 and fuzz["orphans"] == 0, fuzz
    if shutil.which("podman") and Path("/usr/bin/busybox").exists():
        for name in ("seed003-single-to-ha", "seed003-ha-to-single", "seed003-ha-to-pods"):
            assert set(lines[name]) >= {"scenario", "seconds", "orphans"}, lines[name]
            assert lines[name]["orphans"] == 0, lines[name]
            assert lines[name]["seconds"] > 0
        kill = lines["local-container-kill"]
        assert set(kill) >= {"scenario", "median_s", "max_s"} and kill["kills"] == 1, kill

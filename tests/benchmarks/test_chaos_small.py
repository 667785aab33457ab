"""`benchmarks/chaos.py`'s new parts' scenarios at a test's size (issue 39, item 4): real
`shoal server` engines (two here, three in a full run) on their own PostgreSQL database and one
shared `sim` cloud, an engine killed with `kill -9` during each round of changes (document
transitions, workload rollouts, balancer re-renders), the cloud's calls hanging past the engines'
time limit, and (as root) a full tmpfs under the engines' homes. Each scenario's line has the
keys outside checks rely on, and its books are clean: no duplicate, no orphan, nothing stuck,
every failure with a reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "chaos.py"
KEYS = {"scenario", "ops", "kills", "duplicates", "orphans", "stuck"}


def _scenarios() -> list[str]:
    found = ["transitions", "rollouts", "balancers", "hangs"]
    if os.geteuid() == 0:  # a tmpfs is mounted for the full disk
        found.append("full-disk")
    return found


def test_new_parts_scenarios_end_clean_at_a_small_size() -> None:
    names = _scenarios()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }
    run = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            *("--scenario", ",".join(names)),
            # Two engines and one round (a kill in it) keep it near a minute of CPU in all.
            *("--clusters", "1", "--rounds", "1", "--servers", "2"),
            *("--kill-every", "5", "--seed", "3"),
        ],
        capture_output=True,
        text=True,
        timeout=2400,
        check=False,
        env=env,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    by: dict[str, dict[str, Any]] = {line["scenario"]: line for line in lines}
    assert sorted(by) == sorted(names), run.stdout
    for name, line in by.items():
        assert set(line) >= KEYS, line
        clean = {k: line[k] for k in ("duplicates", "orphans", "stuck", "missing", "unexplained")}
        assert clean == dict.fromkeys(clean, 0), (name, line, run.stderr[-2000:])
        assert line["kills"] >= 1 and line["ops"] >= 2, line
        assert line["clusters"] == 1, line
        assert set(line["statuses"]) <= {"SUCCEEDED", "FAILED", "CANCELLED"}, line
    # The hang outlasted the engines' provider-call limit: actions failed, saying why.
    assert by["hangs"]["statuses"].get("FAILED", 0) >= 1, by["hangs"]

"""`benchmarks/cloud.py` at a test's size (issue 37): two real `shoal server` processes on their
own PostgreSQL database, six small clusters of two projects; every scenario prints its line
with the keys outside checks rely on, every cluster is made, and every cluster a failed host
touched is healthy again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "cloud.py"

KEYS = {
    "create": {"clusters", "nodes", "seconds", "cpu_ms_per_node"},
    "idle": {"cpu_percent_per_engine", "cpu_percent_per_engine_empty"},
    "host-loss": {"hosts_failed", "clusters_affected", "seconds"},
    "list": {"first_page_s"},
    "metrics": {"scrape_s", "series"},
}


def test_every_scenario_line_at_a_small_size() -> None:
    run = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            *("--clusters", "6", "--engines", "2", "--projects", "2", "--max-nodes", "4"),
            *("--latency", "0", "--idle-window", "1", "--fail", "0.3", "--heal-limit", "900"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    by: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by.setdefault(line["scenario"], []).append(line)
    assert set(by) == set(KEYS)
    for scenario, keys in KEYS.items():
        for line in by[scenario]:
            assert keys <= set(line), (scenario, line)
    (create,) = by["create"]
    assert create["clusters"] == 6 and create["active"] == create["nodes"]
    assert [x["of"] for x in by["list"]] == ["clusters", "nodes"]
    assert by["list"][0]["first_page_items"] == 6
    (loss,) = by["host-loss"]
    assert loss["hosts_failed"] >= 1 and loss["healed"] == loss["clusters_affected"] >= 1
    assert by["metrics"][0]["series"] > 0
    assert len(by["idle"][0]["cpu_percent_per_engine"]) == 2

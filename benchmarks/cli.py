"""CLI answers: the wall and CPU time of the common `shoal` commands, each a new process.

Target (issue 37, item 7): every common command under 0.3 s of wall time on an idle machine,
`plan` of a small document included (4 nodes: examples/db-pair.yaml). Each command runs as a
new process (`python -m shoal`, as the `shoal` script does) `--runs` times on a private
SHOAL_HOME with the sim provider, against a background Shoal holding one cluster (made from
examples/three-tier.yaml by an untimed `shoal up`); the background Shoal is started by the first,
untimed command and stopped at the end. Every command runs once untimed first, so its modules'
bytecode is cached as an installed Shoal's would be (PYTHONDONTWRITEBYTECODE is dropped).

The floors are what the libraries a command cannot do without cost by themselves, each in a
new interpreter: Python's start, typer, typer's argument coercion (typer >= 0.25 builds a
pydantic TypeAdapter for every option it parses: pydantic comes with any command that takes
one), Rich's console and table, asyncio. They are the reference measured in the same run: a
command's cost above `floor: all of the above` is Shoal's own.

Prints one JSON line per measurement: command, median_s (wall), runs, min_s, cpu_median_s,
cpu_min_s, load_1m; for the commands also target_s and target_met (on the median wall time,
met only when the machine was idle enough to say: see load_1m).
Run: `python benchmarks/cli.py [--runs 9]`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
TARGET_S = 0.3
CLUSTER = "shop"


def env_for(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SHOAL_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPATH"] = str(SRC)
    env.update(
        SHOAL_HOME=str(home),
        SHOAL_PROVIDER="sim",
        SHOAL_PROVIDER_OPTIONS=json.dumps({"state_path": "sim.db"}),
    )
    return env


FLOORS = (
    ("floor: python", "pass"),
    ("floor: import typer", "import typer"),
    ("floor: typer's coercion (pydantic)", "import typer, typer._adapters"),
    ("floor: rich console and table", "import rich.console, rich.table"),
    ("floor: asyncio", "import asyncio"),
    (
        "floor: all of the above",
        "import typer, typer._adapters, rich.console, rich.table, asyncio",
    ),
)

OFFLINE = (
    ["--help"],
    ["--version"],
    ["plan", "examples/db-pair.yaml"],
    ["plan", "examples/db-pair.yaml", "-o", "json"],
)
ONLINE = (
    ["get", "clusters"],
    ["get", "nodes"],
    ["describe", "cluster", CLUSTER],
    ["describe", "node", "web-1"],
    ["events", "--cluster", CLUSTER, "--limit", "20"],
    ["deployments", CLUSTER],
    ["workloads", CLUSTER],
    ["host", "list"],
    ["get", "actions"],
    ["server", "status"],
    ["plan", "examples/three-tier.yaml", "--cluster", CLUSTER],
    ["apply", "examples/three-tier.yaml", "--dry-run"],
)


def timed_python(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `python argv` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, *argv],
        env=env,
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(
    name: str, argv: list[str], env: dict[str, str], runs: int, target: float | None = None
) -> None:
    """`runs` runs of `python argv` after an untimed one; one JSON line."""
    timed_python(argv, env)  # caches bytecode, and starts what the command starts
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = timed_python(argv, env)
        walls.append(wall)
        cpus.append(cpu)
    median = statistics.median(walls)
    line: dict[str, object] = {
        "command": name,
        "median_s": round(median, 4),
        "runs": runs,
        "min_s": round(min(walls), 4),
        "cpu_median_s": round(statistics.median(cpus), 4),
        "cpu_min_s": round(min(cpus), 4),
    }
    if target is not None:
        line.update(target_s=target, target_met=median < target)
    line["load_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(line), flush=True)


def shoal(argv: list[str]) -> list[str]:
    return ["-m", "shoal", *argv]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = env_for(home)
        for name, statement in FLOORS:
            measure(name, ["-c", statement], env, args.runs)
        for argv in OFFLINE:
            measure(f"shoal {' '.join(argv)}", shoal(argv), env, args.runs, TARGET_S)
        # Starts the background Shoal and makes the cluster the reads read, untimed.
        timed_python(shoal(["up", "examples/three-tier.yaml"]), env)
        try:
            for argv in ONLINE:
                measure(f"shoal {' '.join(argv)}", shoal(argv), env, args.runs, TARGET_S)
        finally:
            stop = [sys.executable, "-m", "shoal", "server", "stop"]
            subprocess.run(stop, env=env, check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()

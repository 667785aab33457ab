"""CLI start-up and round trip: `shoal --help`, and `shoal get clusters` against a running Shoal.

Targets (issue 12): `shoal --help` under 0.2 s of CPU, `shoal get clusters` against a running
Shoal under 0.3 s. Each command runs as a new process (`python -m shoal`, as the `shoal`
script does) `--runs` times on a private SHOAL_HOME with the sim provider; the background
Shoal is started by a first, untimed command and stopped at the end. The target is on the CPU
time of the child (user + sys): wall time depends on how loaded the machine is.

The floors are what the libraries a command cannot do without cost by themselves, each in a
new interpreter: Python's start, typer, typer's argument coercion (typer >= 0.25 builds a
pydantic TypeAdapter for every option it parses: pydantic comes with any command that takes
one), Rich's console and table, asyncio.

Prints one JSON line per measurement: command, runs, median_s, min_s (wall), cpu_median_s,
cpu_min_s, and for the two commands target_s and target_met (on the median CPU time).
Run: `python benchmarks/cli.py [--runs 15]`.
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

SRC = Path(__file__).resolve().parents[1] / "src"


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
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


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `shoal argv` (which must succeed)."""
    return timed_python(["-m", "shoal", *argv], env)


def timed_python(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `python argv` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, *argv],
        env=env,
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
    """`runs` runs of `python argv`; one JSON line."""
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = timed_python(argv, env)
        walls.append(wall)
        cpus.append(cpu)
    cpu_median = statistics.median(cpus)
    line: dict[str, object] = {
        "command": name,
        "runs": runs,
        "median_s": round(statistics.median(walls), 4),
        "min_s": round(min(walls), 4),
        "cpu_median_s": round(cpu_median, 4),
        "cpu_min_s": round(min(cpus), 4),
    }
    if target is not None:
        line.update(target_s=target, target_met=cpu_median < target)
    line["load_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = env_for(home)
        for name, statement in FLOORS:
            measure(name, ["-c", statement], env, args.runs)
        measure("shoal --help", ["-m", "shoal", "--help"], env, args.runs, 0.2)
        timed(["get", "clusters"], env)  # starts the background Shoal, untimed
        try:
            measure("shoal get clusters", ["-m", "shoal", "get", "clusters"], env, args.runs, 0.3)
        finally:
            stop = [sys.executable, "-m", "shoal", "server", "stop"]
            subprocess.run(stop, env=env, check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()

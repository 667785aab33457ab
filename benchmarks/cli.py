"""CLI start-up and round trip: `shoal --help`, and `shoal get clusters` against a running Shoal.

Targets (issue 12): `shoal --help` under 0.2 s, `shoal get clusters` against a running Shoal
under 0.3 s. Each command runs as a new process (`python -m shoal`, as the `shoal` script
does) `--runs` times on a private SHOAL_HOME with the sim provider; the background Shoal is
started by a first, untimed command and stopped at the end. Wall time depends on how loaded
the machine is, so the CPU time of each run (user + sys of the child) is printed too.
Prints one JSON line per command: command, runs, median_s, min_s, cpu_median_s, target_s,
target_met (on the median wall time).
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


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `shoal argv` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "shoal", *argv],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(name: str, argv: list[str], env: dict[str, str], runs: int, target: float) -> None:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = timed(argv, env)
        walls.append(wall)
        cpus.append(cpu)
    median = statistics.median(walls)
    print(
        json.dumps(
            {
                "command": name,
                "runs": runs,
                "median_s": round(median, 4),
                "min_s": round(min(walls), 4),
                "cpu_median_s": round(statistics.median(cpus), 4),
                "target_s": target,
                "target_met": median < target,
                "load_1m": round(os.getloadavg()[0], 2),
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = env_for(home)
        measure("shoal --help", ["--help"], env, args.runs, 0.2)
        timed(["get", "clusters"], env)  # starts the background Shoal, untimed
        try:
            measure("shoal get clusters", ["get", "clusters"], env, args.runs, 0.3)
        finally:
            stop = [sys.executable, "-m", "shoal", "server", "stop"]
            subprocess.run(stop, env=env, check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()

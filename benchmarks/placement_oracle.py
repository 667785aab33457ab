"""Placement against the CP-SAT oracle on many seeded random cases (not every CI run).

Each case (tests/placement/strategies.py `random_case`: up to 30 nodes on up to 12 hosts,
half of them tight, with existing nodes, other tenants' usage and every rule) is placed by
`solve` and by the independent oracle (tests/oracle.py). Counted:

- placed / proven infeasible / undecided: Shoal's three answers;
- wrong: "infeasible" where the oracle placed it, placed where the oracle proved it impossible,
  or a placement either checker rejects. Must be 0.

Prints a JSON line per `--every` cases and a final one. Run:
`python benchmarks/placement_oracle.py --cases 20000` (about 1 ms of CP-SAT per case plus
the solve; `--start` picks another seed range). Exit status 1 if any answer was wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.oracle import check_placement, cpsat_place
from tests.placement.strategies import random_case

from shoal.placement import PlacementStatus, solve, verify_placement


def judge(seed: int, time_limit_s: float) -> tuple[str, str, str, str | None]:
    """(Shoal's status, its solver, the oracle's status, what was wrong or None)."""
    case = random_case(seed)
    result = solve(
        case.spec,
        case.inventory,
        existing=case.existing,
        used=case.used,
        seed=case.seed,
        time_limit_s=time_limit_s,
    )
    oracle = cpsat_place(case.spec, case.inventory, existing=case.existing, used=case.used)
    status = result.status
    wrong: str | None = None
    if status is PlacementStatus.PLACED:
        hosts = result.hosts
        broken = check_placement(case.spec, case.inventory, hosts, case.used, case.existing)
        check = verify_placement(case.spec, case.inventory, hosts, case.used)
        broken += list(check.hard_violations)
        if broken:
            wrong = f"placement breaks rules: {broken[:3]}"
        elif oracle.status == "infeasible":
            wrong = "placed, but the oracle proves it infeasible"
    elif status is PlacementStatus.INFEASIBLE and oracle.status == "feasible":
        wrong = f"said infeasible, the oracle placed it: {list(result.reasons)[:2]}"
    return str(status), result.solver, oracle.status, wrong


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=20_000)
    ap.add_argument("--start", type=int, default=1_000_000)
    ap.add_argument("--every", type=int, default=5_000)
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args()
    started = time.perf_counter()
    by_status: Counter[str] = Counter()
    by_solver: Counter[str] = Counter()
    oracle_by: Counter[str] = Counter()
    wrong: list[str] = []

    def line(done: int) -> dict[str, Any]:
        return {
            "benchmark": "placement-oracle",
            "cases": done,
            "seeds": [args.start, args.start + done - 1],
            "placed": by_status["placed"],
            "proven_infeasible": by_status["infeasible"],
            "undecided": by_status["undecided"],
            "wrong": len(wrong),
            "oracle": dict(sorted(oracle_by.items())),
            "by_solver": dict(sorted(by_solver.items())),
            "seconds": round(time.perf_counter() - started, 1),
        }

    for k in range(args.cases):
        seed = args.start + k
        status, solver, oracle, bad = judge(seed, args.time_limit)
        by_status[status] += 1
        by_solver[solver] += 1
        oracle_by[oracle] += 1
        if bad:
            wrong.append(f"seed {seed}: {bad}")
            print(json.dumps({"seed": seed, "wrong": bad}), flush=True)
        if (k + 1) % args.every == 0 and k + 1 < args.cases:
            print(json.dumps(line(k + 1)), flush=True)
    print(json.dumps(line(args.cases)), flush=True)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()

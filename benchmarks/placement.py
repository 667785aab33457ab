"""Placement benchmark: whole-cluster placement speed, memory and quality.

Scenarios (each in its own process, so peak RSS is its own):
- `pack-vs-cpsat-*`: small clusters placed with objective `pack`; hosts used vs CP-SAT's optimum.
- `1k-on-500`: 1,000 nodes on 500 hosts.
- `10k-on-5000`: 10,000 nodes (server+volume units in host affinity, 200 host anti-affinity
  groups of 5, zone spread over 10 zones, mixed flavors) on 5,000 hosts. Target: < 1 s, < 500 MB.

Each scenario prints one JSON line; the 10,000-node scenario comes last.
Run: `python benchmarks/placement.py` (add `--quick` to skip CP-SAT).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path
from typing import Any

from shoal.model import ClusterSpec, Grouping, MemberRef, NodeGroup, Rule, Scope
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, synthetic_inventory
from shoal.model.cluster import UnitPart
from shoal.model.enums import Objective
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.placement import solve, verify_placement

FLAVORS = {f.name: f for f in CLASSIC_FLAVORS}


def _server(flavor: str) -> ServerProfile:
    return ServerProfile(FLAVORS[flavor], CIRROS)


def big_cluster(scale: int) -> ClusterSpec:
    """`scale`=1 gives 10,000 nodes; the shape is kept for smaller scales."""
    groups: list[NodeGroup] = []
    groupings: list[Grouping] = []
    mixes = ("m1.small", "m1.medium", "m1.large", "m1.tiny")
    # 200 database groups of 5 server+volume units, host anti-affinity inside each group.
    n_db = max(1, 200 // scale)
    for i in range(n_db):
        name = f"db{i + 1:03d}"
        groups.append(
            NodeGroup(
                name,
                (
                    UnitPart("server", _server(mixes[i % 3])),
                    UnitPart("data", VolumeProfile(50 + 50 * (i % 3))),
                ),
                count=5,
            )
        )
        groupings.append(Grouping(f"{name}-apart", (MemberRef(name),), Rule.ANTI_AFFINITY))
    # Storage units (server+volume) and plain web servers, spread over every zone.
    n_big = max(1, 10 // scale)
    for i in range(n_big):
        name = f"store{i + 1:02d}"
        groups.append(
            NodeGroup(
                name,
                (UnitPart("server", _server(mixes[i % 4])), UnitPart("data", VolumeProfile(20))),
                count=200,
            )
        )
    for i in range(2 * n_big):
        groups.append(
            NodeGroup(f"web{i + 1:02d}", (UnitPart(None, _server(mixes[i % 4])),), count=200)
        )
    for g in groups[n_db:]:
        groupings.append(
            Grouping(f"{g.name}-spread", (MemberRef(g.name),), Rule.SPREAD, Scope.ZONE)
        )
    return ClusterSpec("bench", node_groups=tuple(groups), groupings=tuple(groupings))


def _node_count(spec: ClusterSpec) -> int:
    return sum(g.count * len(g.parts) for g in spec.node_groups) + len(spec.instances)


def _run(spec: ClusterSpec, inv: Inventory, scenario: str, objective: Objective) -> dict[str, Any]:
    t0 = time.perf_counter()
    result = solve(spec, inv, objective=objective, seed=1)
    seconds = time.perf_counter() - t0
    nodes = _node_count(spec)
    violations = (
        len(verify_placement(spec, inv, result.hosts).hard_violations) if result.feasible else -1
    )
    return {
        "scenario": scenario,
        "nodes": nodes,
        "hosts": len(inv.hosts),
        "feasible": result.feasible,
        "solver": result.solver,
        "seconds": round(seconds, 4),
        "nodes_per_s": round(nodes / seconds),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "hard_violations": violations,
        "hosts_used": len(set(result.hosts.values())),
        "soft_violations": len(result.soft_violations),
    }


def scenario_big(scale: int, hosts: int, zones: int, name: str) -> dict[str, Any]:
    return _run(
        big_cluster(scale), synthetic_inventory(hosts, zones, seed=7), name, Objective.SPREAD
    )


def scenario_pack(seed: int) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.oracle import cpsat_min_hosts, small_pack_case

    spec, inv = small_pack_case(seed)
    out = _run(spec, inv, f"pack-vs-cpsat-{seed}", Objective.PACK)
    out["cpsat_min_hosts"] = cpsat_min_hosts(spec, inv)
    return out


def _child(fn_name: str, args: tuple[Any, ...], q: Any) -> None:
    q.put(globals()[fn_name](*args))


def in_process(fn_name: str, *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(fn_name, args, q))
    p.start()
    out: dict[str, Any] = q.get()
    p.join()
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    if not quick:
        for seed in (1, 2, 3):
            print(json.dumps(in_process("scenario_pack", seed)), flush=True)
    print(json.dumps(in_process("scenario_big", 10, 500, 10, "1k-on-500")), flush=True)
    print(json.dumps(in_process("scenario_big", 1, 5000, 10, "10k-on-5000")), flush=True)


if __name__ == "__main__":
    main()

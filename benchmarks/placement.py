"""Placement benchmark: whole-cluster placement speed, memory and quality.

Scenarios (each in its own process, so peak RSS is its own):
- `pack-vs-cpsat-*`: small clusters placed with objective `pack`; hosts used vs CP-SAT's optimum.
- `pack-gap-1k`: a 1,000-node pack on 500 hosts: hosts used vs a lower bound (total demand over
  the largest hosts), since CP-SAT cannot prove the optimum at that size.
- `tight-set`: seeded random small cases (half tight; tests/placement/strategies.py): how many
  Shoal places, proves infeasible, leaves undecided, and refuses although the CP-SAT oracle
  places them (must be 0).
- `1k-on-500`: 1,000 nodes on 500 hosts.
- `growth` (issue 23): placement's CPU per node at 100,000 nodes over 1,000 (`growth`, target
  <= 1.5), on `benchmarks/scale.py`'s cluster shape and host count; the same at 10,000
  (`cpu_us_per_node_mid`, `growth_mid`), and at 10,000 the ratio to the reference greedy in
  the same run (`ratio_mid` by wall time, `ratio_mid_cpu` by CPU time, target >= 0.5).
- `10k-on-5000`: 10,000 nodes (server+volume units in host affinity, 200 host anti-affinity
  groups of 5, zone spread over 10 zones, mixed flavors) on 5,000 hosts. Target: >= 50,000
  nodes/s on one core, < 500 MB.
- `100k-on-50000` (issue 37): the same shape ten times over (2,000 anti-affinity groups,
  100,000 nodes) on 50,000 hosts, best of 2. With `10k-on-5000`, `ratio_cpu` is the speed
  ratio to the bucket greedy in the same run (issue 37's target: at least 0.8 at both sizes).

The two size scenarios also run, in the same process on the same hosts and units, a
*reference greedy*: constraint-blind (capacity, a per-host cap per group, least-loaded zone
first), bucketed by free vcpus like /work/shared/peers/greedy/bench.py's `bucket` (its idea,
copied so the benchmark stands alone). Machines here are shared and absolute speed varies 2x
between runs; `ratio` (Shoal / reference, same run) is the steadier figure. Each is timed both
by the wall clock and by CPU time of this process (`*_cpu`), which load disturbs less.

The size scenarios run Shoal and the reference 3 times, alternating, and report the best
of each (wall and CPU separately). Each scenario prints one JSON line; the 10,000-node
scenario comes last.
Every solve runs with the garbage collector paused, as the engine's planning phase runs it.
Run: `python benchmarks/placement.py` (add `--quick` to skip CP-SAT and the tight set).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from shoal.gc_pause import collector_paused
from shoal.model import ClusterSpec, Grouping, MemberRef, NodeGroup, Rule, Scope
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, synthetic_inventory
from shoal.model.cluster import UnitPart
from shoal.model.enums import Objective
from shoal.model.inventory import Inventory
from shoal.model.nodes import expand
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.placement import PlacementStatus, solve, verify_placement

FLAVORS = {f.name: f for f in CLASSIC_FLAVORS}


def _server(flavor: str) -> ServerProfile:
    return ServerProfile(FLAVORS[flavor], CIRROS)


def big_cluster(scale: int, times: int = 1) -> ClusterSpec:
    """`scale`=1 gives 10,000 nodes; the shape is kept for smaller scales, and for `times` as
    many (100,000 nodes at 10: ten times the groups of each kind)."""
    groups: list[NodeGroup] = []
    groupings: list[Grouping] = []
    mixes = ("m1.small", "m1.medium", "m1.large", "m1.tiny")
    # 200 database groups of 5 server+volume units, host anti-affinity inside each group.
    n_db = max(1, 200 * times // scale)
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
    n_big = max(1, 10 * times // scale)
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


def reference_greedy(spec: ClusterSpec, inv: Inventory, max_per_host: int = 2) -> tuple[int, float]:
    """Constraint-blind bucketed greedy over the same units and hosts: (nodes placed, seconds).
    See `reference_greedy_timed`."""
    placed, seconds, _ = reference_greedy_timed(spec, inv, max_per_host)
    return placed, seconds


def reference_greedy_timed(
    spec: ClusterSpec, inv: Inventory, max_per_host: int = 2
) -> tuple[int, float, float]:
    """Constraint-blind bucketed greedy over the same units and hosts: (nodes placed, wall
    seconds, CPU seconds), both of the placing only (its input made outside the timing).

    Hosts sit in per-zone buckets by free vcpus; a unit goes to the zone where its group has
    fewest members, on the first host of the smallest bucket that fits (best fit on vcpus)
    with RAM, disk and volume room and fewer than `max_per_host` of its group.
    """
    zones = {z: i for i, z in enumerate(inv.zones)}
    hosts = [[zones[h.zone], h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb] for h in inv.hosts]
    units: dict[str, list[int]] = {}
    groups: dict[str, int] = {}
    for n in expand(spec):
        nd = n.demand
        u = units.setdefault(n.unit, [groups.setdefault(n.group, len(groups)), 0, 0, 0, 0, 0])
        u[1] += nd.vcpus
        u[2] += nd.ram_mb
        u[3] += nd.disk_gb
        u[4] += nd.volume_gb
        u[5] += 1
    work = list(units.values())
    t0, c0 = time.perf_counter(), time.process_time()
    nz = len(zones)
    top = max(h[1] for h in hosts) + 1
    buckets: list[list[set[int]]] = [[set() for _ in range(top)] for _ in range(nz)]
    for i, h in enumerate(hosts):
        buckets[h[0]][h[1]].add(i)
    per_host: dict[tuple[int, int], int] = {}
    per_zone: dict[tuple[int, int], int] = {}
    placed = 0
    for g, c, r, d, v, count in work:
        found = None
        for z in sorted(range(nz), key=lambda z: per_zone.get((g, z), 0)):
            bz = buckets[z]
            for fc in range(c, top):
                for i in bz[fc]:
                    f = hosts[i]
                    if (
                        f[2] >= r
                        and f[3] >= d
                        and f[4] >= v
                        and per_host.get((g, i), 0) < max_per_host
                    ):
                        found = i
                        break
                if found is not None:
                    break
            if found is not None:
                break
        if found is None:
            continue
        f = hosts[found]
        buckets[f[0]][f[1]].discard(found)
        f[1] -= c
        f[2] -= r
        f[3] -= d
        f[4] -= v
        buckets[f[0]][f[1]].add(found)
        per_host[g, found] = per_host.get((g, found), 0) + 1
        per_zone[g, f[0]] = per_zone.get((g, f[0]), 0) + 1
        placed += count
    return placed, time.perf_counter() - t0, time.process_time() - c0


def _timed(fn: Any) -> tuple[Any, float, float]:
    """`fn()`, its wall and CPU seconds. With the garbage collector paused, as the engine's
    planning phase solves (`shoal/gc_pause.py`: the process's owner decides, not the solver)."""
    with collector_paused():
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        return out, time.perf_counter() - w0, time.process_time() - c0


def _run(
    spec: ClusterSpec,
    inv: Inventory,
    scenario: str,
    objective: Objective,
    reference: bool = False,
    repeat: int = 1,
) -> dict[str, Any]:
    """One scenario; with `repeat`, Shoal and the reference alternate that many times and
    the best wall and CPU times of each count (the machine's load comes and goes)."""
    result, seconds, cpu = _timed(lambda: solve(spec, inv, objective=objective, seed=1))
    nodes = _node_count(spec)
    ref_runs: list[tuple[int, float, float]] = []
    for k in range(repeat if reference else 0):
        if k:
            _, s, c = _timed(lambda: solve(spec, inv, objective=objective, seed=1))
            seconds, cpu = min(seconds, s), min(cpu, c)
        c0 = time.process_time()
        placed, ref_s = reference_greedy(spec, inv)
        # Its CPU time includes preparing its input: a little generous to Shoal's ratio.
        ref_runs.append((placed, ref_s, time.process_time() - c0))
    violations = (
        len(verify_placement(spec, inv, result.hosts).hard_violations) if result.feasible else -1
    )
    out: dict[str, Any] = {
        "scenario": scenario,
        "nodes": nodes,
        "hosts": len(inv.hosts),
        "feasible": result.feasible,
        "status": str(result.status),
        "solver": result.solver,
        "seconds": round(seconds, 4),
        "nodes_per_s": round(nodes / seconds),
        "nodes_per_s_cpu": round(nodes / max(cpu, 1e-9)),
    }
    if ref_runs:
        placed = ref_runs[0][0]
        ref_s = min(r[1] for r in ref_runs)
        ref_cpu = min(r[2] for r in ref_runs)
        out.update(
            runs=repeat,
            reference_nodes_per_s=round(placed / ref_s),
            reference_nodes_per_s_cpu=round(placed / max(ref_cpu, 1e-9)),
            reference_unplaced=nodes - placed,
            ratio=round((nodes / seconds) / (placed / ref_s), 3),
            ratio_cpu=round((nodes / max(cpu, 1e-9)) / (placed / max(ref_cpu, 1e-9)), 3),
        )
    out.update(
        peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        hard_violations=violations,
        hosts_used=len(set(result.hosts.values())),
        soft_violations=len(result.soft_violations),
    )
    return out


def scenario_big(
    scale: int, hosts: int, zones: int, name: str, times: int = 1, repeat: int = 3
) -> dict[str, Any]:
    spec, inv = big_cluster(scale, times), synthetic_inventory(hosts, zones, seed=7)
    solve(big_cluster(100), inv, seed=1)  # warm up imports and caches outside the timing
    return _run(spec, inv, name, Objective.SPREAD, reference=True, repeat=repeat)


def scenario_pack_gap(scale: int, hosts: int, zones: int, name: str) -> dict[str, Any]:
    """`pack` at a size CP-SAT cannot prove: hosts used vs a lower bound on any placement."""
    spec, inv = big_cluster(scale), synthetic_inventory(hosts, zones, seed=7)
    out = _run(spec, inv, name, Objective.PACK)
    need = [0, 0, 0, 0]
    for n in expand(spec):
        d = n.demand
        for r, v in enumerate((d.vcpus, d.ram_mb, d.disk_gb, d.volume_gb)):
            need[r] += v
    caps = [[h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb] for h in inv.hosts]
    bound = 0
    for r in range(4):
        total, k = 0, 0
        for c in sorted((c[r] for c in caps), reverse=True):
            if total >= need[r]:
                break
            total, k = total + c, k + 1
        bound = max(bound, k)
    # Anti-affinity groups of 5 need 5 hosts at least.
    out["lower_bound_hosts"] = max(bound, 5)
    out["gap_hosts"] = out["hosts_used"] - out["lower_bound_hosts"]
    return out


def scenario_tight(cases: int) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.oracle import cpsat_place
    from tests.placement.strategies import random_case

    counts = dict.fromkeys(PlacementStatus, 0)
    refused_feasible = 0
    started = time.perf_counter()
    for seed in range(cases):
        c = random_case(seed)
        r = solve(c.spec, c.inventory, existing=c.existing, used=c.used, seed=c.seed)
        counts[r.status] += 1
        if not r.feasible:
            oracle = cpsat_place(c.spec, c.inventory, existing=c.existing, used=c.used)
            refused_feasible += oracle.status == "feasible"
    return {
        "scenario": "tight-set",
        "cases": cases,
        "placed": counts[PlacementStatus.PLACED],
        "infeasible": counts[PlacementStatus.INFEASIBLE],
        "undecided": counts[PlacementStatus.UNDECIDED],
        "refused_but_feasible": refused_feasible,
        "seconds": round(time.perf_counter() - started, 2),
    }


def scenario_pack(seed: int) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.oracle import cpsat_min_hosts, small_pack_case

    spec, inv = small_pack_case(seed)
    out = _run(spec, inv, f"pack-vs-cpsat-{seed}", Objective.PACK)
    out["cpsat_min_hosts"] = cpsat_min_hosts(spec, inv)
    return out


def scale_shape(nodes: int) -> ClusterSpec:
    """`benchmarks/scale.py`'s cluster: groups of 500 m1.tiny servers, the first spread over
    zones (issue 23's growth figures are measured on it)."""
    groups = max(1, nodes // 500)
    per = nodes // groups
    tiny = _server("m1.tiny")
    node_groups = tuple(
        NodeGroup(
            f"g{g + 1}",
            (UnitPart(None, tiny),),
            count=per if g < groups - 1 else nodes - per * (groups - 1),
        )
        for g in range(groups)
    )
    spread = Grouping("spread", (MemberRef("g1"),), Rule.SPREAD, Scope.ZONE)
    return ClusterSpec("scale", node_groups=node_groups, groupings=(spread,))


def scenario_growth(small: int, large: int, mid: int = 10_000) -> dict[str, Any]:
    """Placement's CPU per node at `large` nodes over `small` (issue 23: within 1.5x), on
    `scale.py`'s shape and sim inventory (a host per 8 nodes, 3 zones); best of 3 at the
    largest size, of up to 20 at smaller ones.

    At `mid` nodes also the ratio to the reference greedy (issue 23: at least 0.5 at 10,000),
    in the same run on the same units and hosts, Shoal and the reference alternating 3 times,
    best of each. The reference is timed as /work/shared/peers/greedy/bench.py times its
    placers: the placing loop only, by the wall clock and by CPU time (`ratio_mid`,
    `ratio_mid_cpu`).
    """
    per_node: dict[int, float] = {}
    ratio: dict[str, Any] = {}
    refs: list[tuple[int, float, float]] = []
    for n in (small, mid, large):
        spec, inv = scale_shape(n), synthetic_inventory(max(10, n // 8), 3, seed=7)
        solve(scale_shape(100), inv, seed=1)  # imports and caches outside the timing
        runs = []
        # Best of 3 at 100,000; more at smaller sizes, where a run is short enough that one
        # slice of a loaded machine decides it (more samples only lower the small-size
        # figures, so the growth is not flattered).
        for _ in range(max(3, 20_000 // n)):
            _, wall, cpu = _timed(lambda s=spec, i=inv: solve(s, i, seed=1))
            runs.append((wall, cpu))
            if n == mid and len(refs) < 3:
                refs.append(reference_greedy_timed(spec, inv))
        per_node[n] = min(c for _, c in runs) / n
        if n == mid:
            wall = min(w for w, _ in runs)
            placed = refs[0][0]
            ref_wall = min(r[1] for r in refs)
            ref_cpu = min(r[2] for r in refs)
            ratio = {
                "nodes_per_s_mid": round(n / wall),
                "nodes_per_s_cpu_mid": round(1 / per_node[n]),
                "reference_nodes_per_s_mid": round(placed / ref_wall),
                "reference_nodes_per_s_cpu_mid": round(placed / max(ref_cpu, 1e-9)),
                "reference_unplaced_mid": n - placed,
                "ratio_mid": round((n / wall) / (placed / ref_wall), 3),
                "ratio_mid_cpu": round((1 / per_node[n]) / (placed / max(ref_cpu, 1e-9)), 3),
            }
    return {
        "scenario": "growth",
        "nodes_small": small,
        "nodes_large": large,
        "cpu_us_per_node_small": round(per_node[small] * 1e6, 2),
        "cpu_us_per_node_large": round(per_node[large] * 1e6, 2),
        "growth": round(per_node[large] / per_node[small], 3),
        "nodes_mid": mid,
        "cpu_us_per_node_mid": round(per_node[mid] * 1e6, 2),
        "growth_mid": round(per_node[mid] / per_node[small], 3),
        **ratio,
        "load_1min": round(os.getloadavg()[0], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


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
        print(json.dumps(in_process("scenario_pack_gap", 10, 500, 10, "pack-gap-1k")), flush=True)
        print(json.dumps(in_process("scenario_tight", 500)), flush=True)
    print(json.dumps(in_process("scenario_growth", 1_000, 100_000)), flush=True)
    print(json.dumps(in_process("scenario_big", 10, 500, 10, "1k-on-500")), flush=True)
    print(json.dumps(in_process("scenario_big", 1, 5000, 10, "10k-on-5000")), flush=True)
    print(
        json.dumps(in_process("scenario_big", 1, 50_000, 10, "100k-on-50000", 10, 2)),
        flush=True,
    )


if __name__ == "__main__":
    main()

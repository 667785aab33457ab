"""Workloads benchmark (issue 22): one JSON line per scenario.

Measured now (the second level of placement, `placement/workloads/`, on `sim` sizes):
- `sim-place-and-start`: 10,000 replicas of 50 workloads (zone spread, at most 2 per host,
  at most 1 per server for the 10 that bind a port, the rest at most 4 per server, 25 with a
  node selector) onto 1,000 servers that the first level placed on 500 hosts in 10 zones.
  `placement_cpu_s` is the replicas' placement (CPU time of this process); `server_cpu_s` is
  Shoal's own server placement of 10,000 servers (same rules as groupings) on 1,000 hosts, and
  `ratio` the first over the second: the same sizes, one level down.
- `sim-node-loss`: 10 % of the servers lost; every replica placed again with the running ones
  kept where they are: `placement_cpu_s`, `moved` (replicas that were on lost servers).

Both also run a real engine on `sim` (benchmarks/workloads_engine.py): `ready_s` is request ->
every replica ready (servers created, replicas placed and started by the engine's keeper), and
for `sim-node-loss` hosts failed until 10 % of the servers are lost -> every replica ready on
a live server again; `ready_cpu_s` is this process's CPU over the same span.

- `sim-rollout` (benchmarks/workloads_rollout.py): a rolling update of 100 replicas on a real
  engine on `sim`: `seconds` and `batches` of an image change, then an image the runtime
  starts refusing half-way: `rolled_back`, `rollback_s`, `rollback_batches`,
  `failed_after_batches`; then a third image with `max_surge: 10`: `surge_seconds`,
  `surge_batches`, `surge_started`, `surge_peak_replicas`, `surge_min_ready`.

- `sim-k8s-limits` (benchmarks/workloads_k8s.py, issue 37): Kubernetes' documented limits, 500
  workloads of 150,000 replicas on 5,000 servers under every kind of rule: `replicas`,
  `servers`, `placement_cpu_s` (the solver alone) with `server_cpu_s` and `ratio` (Shoal's own
  first level at the same count), then a real engine on `sim`: `seconds` (request -> every
  replica ready), `node_loss_s` (10 % of the servers lost -> every replica ready elsewhere),
  `rollout_s` (a 10,000-replica workload's image changed -> every replica of it on the new
  revision), each with its CPU (`*_cpu_s`). `--k8s-scale` shrinks servers and replicas, and
  `--k8s-engine-scale` the engine part alone (hours at full size on this 2-core machine).

- `local-container-kill`, `local-host-fail` (benchmarks/workloads_local.py): seed 003's
  `-e ha.yaml` on `local`, real podman containers: `kill -9` of a replica's container -> ready
  again (`--runs`, default 10); a host failed -> its replica ready on a live controller and the
  balancer re-rendered (`--host-fail-runs`, default 3). `median_s`, `max_s`, `times_s`.

Run: `python benchmarks/workloads.py [--runs 10] [--host-fail-runs 3] [--only-local]
[--only-k8s --k8s-scale 1 --k8s-engine-scale 0.05]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import time
from dataclasses import replace

import workloads_k8s
import workloads_local
from shoal.model import ClusterSpec, Grouping, MemberRef, NodeGroup, Rule, Scope
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, synthetic_inventory
from shoal.model.cluster import UnitPart
from shoal.model.profile import ServerProfile
from shoal.model.workloads import (
    Container,
    ContainerPort,
    NodeSelector,
    Workload,
    WorkloadRule,
    WorkloadRuleKind,
    WorkloadScope,
)
from shoal.placement import solve
from shoal.placement.workloads import WorkloadPlacement, place_workloads, violations
from shoal.placement.workloads.servers import node_slots
from workloads_engine import run as engine_run
from workloads_rollout import run as rollout_run

FLAVORS = {f.name: f for f in CLASSIC_FLAVORS}
SERVERS = 1_000
WORKLOADS = 50
PER_WORKLOAD = 200


def servers_cluster() -> ClusterSpec:
    """1,000 servers in 4 groups, two of them labelled `tier: front`."""
    groups = tuple(
        NodeGroup(
            f"g{i}",
            (UnitPart(None, ServerProfile(FLAVORS["m1.xlarge"], CIRROS)),),
            SERVERS // 4,
            labels={"tier": "front" if i < 2 else "back"},
        )
        for i in range(4)
    )
    return ClusterSpec("bench", node_groups=groups)


def workloads() -> tuple[Workload, ...]:
    out = []
    for j in range(WORKLOADS):
        ports = (ContainerPort(10_000 + j),) if j < 10 else ()
        selector = NodeSelector(labels={"tier": "front"}) if j % 2 else NodeSelector()
        container = Container(
            "c", "img", ports=ports, cpu_milli=random.choice([100, 250]), memory_mb=128
        )
        rules = (
            WorkloadRule(WorkloadRuleKind.SPREAD, WorkloadScope.ZONE),
            WorkloadRule(WorkloadRuleKind.ANTI_AFFINITY, WorkloadScope.HOST, max_per_domain=2),
        )
        out.append(
            Workload(
                f"w{j}",
                (container,),
                PER_WORKLOAD,
                rules=rules,
                max_per_node=None if ports else 4,
                selector=selector,
            )
        )
    return tuple(out)


def server_placement_cpu() -> float:
    """Shoal's own first level at the same size: 10,000 servers on 1,000 hosts."""
    inv = synthetic_inventory(1_000, 10, seed=1)
    groups = tuple(
        NodeGroup(
            f"s{j}", (UnitPart(None, ServerProfile(FLAVORS["m1.small"], CIRROS)),), PER_WORKLOAD
        )
        for j in range(WORKLOADS)
    )
    groupings = tuple(
        Grouping(f"spread-{j}", (MemberRef(f"s{j}"),), Rule.SPREAD, Scope.ZONE)
        for j in range(WORKLOADS)
    )
    spec = ClusterSpec("servers", node_groups=groups, groupings=groupings)
    started = time.process_time()
    result = solve(spec, inv)
    cpu = time.process_time() - started
    assert result.feasible, result.reasons
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="local-container-kill's runs")
    parser.add_argument("--host-fail-runs", type=int, default=3)
    parser.add_argument("--only-local", action="store_true", help="skip the sim scenarios")
    parser.add_argument("--only-sim", action="store_true", help="skip the local scenarios")
    parser.add_argument("--only-k8s", action="store_true", help="only sim-k8s-limits")
    parser.add_argument("--k8s-scale", type=float, default=1.0, help="sim-k8s-limits' size")
    parser.add_argument(
        "--k8s-engine-scale", type=float, default=None, help="its engine part's (default: same)"
    )
    parser.add_argument("--k8s-deadline", type=float, default=7200.0)
    args = parser.parse_args()
    if args.only_k8s:
        k8s(args.k8s_scale, args.k8s_engine_scale or args.k8s_scale, args.k8s_deadline)
        return
    if args.only_local:
        local(args.runs, args.host_fail_runs)
        return
    random.seed(22)
    inv = synthetic_inventory(500, 10, seed=0)
    cluster = replace(servers_cluster(), workloads=workloads())
    ran = asyncio.run(engine_run(cluster, inv, sum(w.replicas for w in cluster.workloads)))
    servers = solve(servers_cluster(), inv)
    assert servers.feasible, servers.reasons
    slots = node_slots(servers_cluster(), servers.assignments)
    wl = cluster.workloads
    replicas = sum(w.replicas for w in wl)
    started, wall = time.process_time(), time.perf_counter()
    placed = place_workloads(wl, slots)
    cpu, seconds = time.process_time() - started, time.perf_counter() - wall
    assert isinstance(placed, WorkloadPlacement), placed
    assert not violations(wl, slots, placed.node_of)
    server_cpu = server_placement_cpu()
    print(
        json.dumps(
            {
                "scenario": "sim-place-and-start",
                "replicas": replicas,
                "workloads": len(wl),
                "nodes": len(slots),
                "seconds": round(seconds, 3),
                "placement_cpu_s": round(cpu, 3),
                "method": placed.method,
                "server_cpu_s": round(server_cpu, 3),
                "ratio": round(cpu / server_cpu, 2),
                "ready_s": round(ran.create_ready_s, 2),
                "ready_cpu_s": round(ran.create_cpu_s, 2),
                "measured": "ready_s: request -> every replica ready, a real engine on sim "
                "(the 1,000 servers' creation included); placement_cpu_s: the solver alone",
            }
        ),
        flush=True,
    )
    lost = set(random.sample([s.node for s in slots], len(slots) // 10))
    alive = node_slots(servers_cluster(), servers.assignments, frozenset(lost))
    kept = {r: n for r, n in placed.node_of.items()}
    started, wall = time.process_time(), time.perf_counter()
    again = place_workloads(wl, alive, kept)
    cpu, seconds = time.process_time() - started, time.perf_counter() - wall
    assert isinstance(again, WorkloadPlacement), again
    assert not violations(wl, alive, again.node_of)
    on_lost = sum(1 for n in placed.node_of.values() if n in lost)
    print(
        json.dumps(
            {
                "scenario": "sim-node-loss",
                "replicas": replicas,
                "nodes_lost": len(lost),
                "replicas_on_lost_nodes": on_lost,
                "moved": len(again.moved),
                "seconds": round(seconds, 3),
                "placement_cpu_s": round(cpu, 3),
                "method": again.method,
                "ready_s": round(ran.loss_ready_s, 2),
                "ready_cpu_s": round(ran.loss_cpu_s, 2),
                "engine_nodes_lost": ran.nodes_lost,
                "measured": "ready_s: hosts failed -> every replica ready on a live server, a "
                "real engine on sim; placement_cpu_s: the solver alone on a random 10 %",
            }
        ),
        flush=True,
    )
    roll = asyncio.run(rollout_run())
    print(
        json.dumps(
            {
                "scenario": "sim-rollout",
                "replicas": roll.replicas,
                "seconds": round(roll.seconds, 2),
                "cpu_s": round(roll.cpu_s, 2),
                "batches": roll.batches,
                "max_unavailable": 10,
                "rolled_back": roll.rolled_back,
                "rollback_s": round(roll.rollback_s, 2),
                "rollback_cpu_s": round(roll.rollback_cpu_s, 2),
                "rollback_batches": roll.rollback_batches,
                "failed_after_batches": roll.failed_after_batches,
                "rollback_reason": roll.reason,
                "max_surge": 10,
                "surge_seconds": round(roll.surge_seconds, 2),
                "surge_cpu_s": round(roll.surge_cpu_s, 2),
                "surge_batches": roll.surge_batches,
                "surge_started": roll.surge_started,
                "surge_peak_replicas": roll.surge_peak_replicas,
                "surge_min_ready": roll.surge_min_ready,
                "measured": "seconds: image change -> every replica on the new revision, a "
                "real engine on sim (0.2 s manager tick, one batch per tick at most); "
                "rollback_s: the new image refused half-way -> every replica back on the "
                "previous one; surge_*: a third image with max_surge 10 (room for one "
                "more replica per server): the surge replicas' rollout",
            }
        ),
        flush=True,
    )
    if not args.only_sim:
        local(args.runs, args.host_fail_runs)


def k8s(scale: float, engine_scale: float, deadline_s: float) -> None:
    """`sim-k8s-limits`: the solver at `scale`, the engine at `engine_scale`."""
    shape = workloads_k8s.Shape.scaled(scale)
    line: dict[str, object] = {
        "scenario": "sim-k8s-limits",
        "replicas": shape.replicas,
        "servers": shape.servers,
        "workloads": shape.workloads,
        **workloads_k8s.place(shape),
    }
    ran = workloads_k8s.Shape.scaled(engine_scale)
    line.update(
        engine_replicas=ran.replicas,
        engine_servers=ran.servers,
        **asyncio.run(workloads_k8s.engine_run(ran, deadline_s)),
        load_1m=round(os.getloadavg()[0], 2),
    )
    print(json.dumps(line), flush=True)


def local(kill_runs: int, fail_runs: int) -> None:
    """The real runtime on `local` (benchmarks/workloads_local.py): seed 003's ha.yaml."""
    scenarios = (
        ("local-container-kill", workloads_local.container_kill, kill_runs),
        ("local-host-fail", workloads_local.host_fail, fail_runs),
    )
    for name, scenario, runs in scenarios:
        if not workloads_local.available():
            print(json.dumps({"scenario": name, "status": "skipped: no podman"}), flush=True)
            continue
        load = os.getloadavg()[0]
        times = scenario(runs)
        print(
            json.dumps(
                {
                    "scenario": name,
                    "replicas": workloads_local.REPLICAS,
                    "runs": len(times),
                    "median_s": round(statistics.median(times), 3),
                    "max_s": round(max(times), 3),
                    "times_s": [round(t, 3) for t in times],
                    "load_1m": round(load, 2),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()

"""The `sim-k8s-limits` scenario of benchmarks/workloads.py (issue 37): workloads at
Kubernetes' documented limits (5,000 nodes, 150,000 pods, at most 110 per node) on `sim`.

The cluster: 5,000 servers (m1.xlarge, four node groups, two labelled `tier: front`) on 2,500
hosts in 10 zones, and 500 workloads of 150,000 replicas in all: `big`, 10,000 replicas (the
most a workload may have), and 499 of 280 or 281. Every rule at once: every workload spread
over zones and (but `big`, which has more replicas than that allows) at most 2 replicas per
host; one in ten binds a port on the node's address (so
at most one of it per server); the others at most 8 per server; every other one picks the
front servers by label; ten pairs keep apart by zone-less anti-affinity `against` each other
at node scope. Placement alone (the solver, this process's CPU): `placement_cpu_s`, and the
ratio to Shoal's own first level placing as many servers (150,000 m1.tiny, 500 groups spread
over zones) onto an inventory of 5,000 hosts (`server_cpu_s`, `ratio`). Then a real engine on
`sim` (SQLite, in this process, the system clock): the cluster's create -> every replica ready
(`seconds`, `cpu_s`); 10 % of the servers lost (their hosts failed) -> every replica ready on
a live server (`node_loss_s`, `node_loss_cpu_s`); a new image for `big` -> its 10,000
replicas on the new revision and ready (`rollout_s`, `rollout_cpu_s`). `--k8s-scale` shrinks
the servers and replicas (the 500 workloads stay, each with fewer) to show how the figures
grow.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from shoal.engine import Engine
from shoal.gc_pause import collector_paused
from shoal.model import ClusterSpec, Grouping, MemberRef, NodeGroup, Rule, Scope
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, synthetic_inventory
from shoal.model.cluster import UnitPart
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile
from shoal.model.workload_rollouts import WorkloadPhase
from shoal.placement import solve
from shoal.placement.workloads import WorkloadPlacement, place_workloads, violations
from shoal.placement.workloads.servers import node_slots
from shoal.providers.sim.provider import SimProvider
from shoal.service.clusters import ClusterService
from shoal.store import nodes as node_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import Principal

ADMIN = Principal("admin", True)
FLAVORS = {f.name: f for f in CLASSIC_FLAVORS}


@dataclass(frozen=True, slots=True)
class Shape:
    servers: int
    workloads: int
    replicas: int
    big: int

    @classmethod
    def scaled(cls, scale: float) -> Shape:
        servers = max(40, round(5_000 * scale))
        return cls(servers, 500, round(150_000 * scale), round(10_000 * scale))

    def counts(self) -> list[int]:
        """Replicas per workload, `big` first."""
        rest = self.replicas - self.big
        n = self.workloads - 1
        return [self.big] + [rest // n + (1 if i < rest % n else 0) for i in range(n)]


def document(shape: Shape, big_image: str = "app:1") -> str:
    lines = ["name: k8s", "node_groups:"]
    for g in range(4):
        lines += [
            f"  - name: g{g}",
            "    profile: {type: server, flavor: m1.xlarge, image: cirros}",
            f"    count: {shape.servers // 4 + (1 if g < shape.servers % 4 else 0)}",
            f"    labels: {{tier: {'front' if g < 2 else 'back'}}}",
        ]
    lines.append("workloads:")
    for j, count in enumerate(shape.counts()):
        name = "big" if j == 0 else f"w{j:03d}"
        port = j % 10 == 5
        image = big_image if j == 0 else "app:1"
        ports = f", ports: [{20_000 + j}]" if port else ""
        lines += [
            f"  {name}:",
            f"    replicas: {count}",
            f"    containers: [{{name: c, image: {image}, "
            f"resources: {{cpu: {0.05 if j % 2 else 0.1}, memory_mb: 64}}{ports}}}]",
            "    rules:",
            "      - {rule: spread, scope: zone, max_skew: 1}",
        ]
        if count <= shape.servers:  # (two replicas per host; `big` has more than that)
            lines.append("      - {rule: anti-affinity, scope: host, max_per_domain: 2}")
        if 0 < j <= 20 and j % 2 == 0:
            lines.append(f"      - {{rule: anti-affinity, scope: node, against: w{j - 1:03d}}}")
        if not port:
            lines.append("    max_per_node: 8")
        if j % 2 and j:
            lines.append("    nodes: {labels: {tier: front}}")
        if j == 0:
            lines.append(f"    update: {{max_unavailable: {max(1, count // 10)}}}")
    return "\n".join(lines) + "\n"


def inventory(shape: Shape) -> Inventory:
    return synthetic_inventory(max(10, shape.servers // 2), 10, seed=3)


def server_placement_cpu(shape: Shape) -> float:
    """Shoal's own first level at the replicas' count: as many m1.tiny servers, in as many
    groups spread over zones, on as many hosts as the replicas have servers."""
    inv = synthetic_inventory(shape.servers, 10, seed=1)
    tiny = ServerProfile(FLAVORS["m1.tiny"], CIRROS)
    groups = tuple(
        NodeGroup(f"s{j}", (UnitPart(None, tiny),), count) for j, count in enumerate(shape.counts())
    )
    groupings = tuple(
        Grouping(f"spread-{g.name}", (MemberRef(g.name),), Rule.SPREAD, Scope.ZONE) for g in groups
    )
    spec = ClusterSpec("servers", node_groups=groups, groupings=groupings)
    with collector_paused():  # as the engine's planning runs it (shoal/gc_pause.py)
        started = time.process_time()
        result = solve(spec, inv)
        cpu = time.process_time() - started
    assert result.feasible, result.reasons
    return cpu


def place(shape: Shape) -> dict[str, object]:
    """The second level alone: every replica onto the placed servers, every rule checked."""
    from shoal.documents.loader import load_cluster

    inv = inventory(shape)
    spec = load_cluster(document(shape), inv)
    with collector_paused():
        servers = solve(spec, inv, workloads=False)
        assert servers.feasible, servers.reasons
        slots = node_slots(spec, servers.assignments)
        started, wall = time.process_time(), time.perf_counter()
        placed = place_workloads(spec.workloads, slots)
        cpu, seconds = time.process_time() - started, time.perf_counter() - wall
    assert isinstance(placed, WorkloadPlacement), placed.reasons
    broken = violations(spec.workloads, slots, placed.node_of)
    per_server: dict[str, int] = {}
    for node in placed.node_of.values():
        per_server[node] = per_server.get(node, 0) + 1
    server_cpu = server_placement_cpu(shape)
    return {
        "placement_cpu_s": round(cpu, 3),
        "placement_s": round(seconds, 3),
        "method": placed.method,
        "violations": len(broken),
        "most_per_server": max(per_server.values()),
        "server_cpu_s": round(server_cpu, 3),
        "ratio": round(cpu / server_cpu, 2),
    }


def _ready(db: Database, cid: str, lost: frozenset[str] = frozenset()) -> int:
    with db.reading() as conn:
        rows = replica_repo.load(conn, [cid])[cid]
    return sum(1 for r in rows.values() if r.ready and r.node not in lost)


def _rolled(db: Database, cid: str, image: str) -> bool:
    with db.reading() as conn:
        found = [r for r in rollout_repo.of_cluster(conn, cid) if r.workload == "big"]
    return bool(found) and any(
        r.phase is WorkloadPhase.COMPLETE and r.target.containers[0].image == image for r in found
    )


async def _until(check: object, deadline_s: float) -> None:
    deadline = time.perf_counter() + deadline_s
    while not check():  # type: ignore[operator]
        if time.perf_counter() > deadline:
            raise TimeoutError("the engine never got there")
        await asyncio.sleep(0.5)


async def engine_run(shape: Shape, deadline_s: float) -> dict[str, object]:
    """The real engine: create -> all ready; 10 % of servers lost -> all ready elsewhere; a
    rolling update of `big` -> its replicas on the new image."""
    inv = inventory(shape)
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'shoal.db'}")
        db.migrate()
        provider = SimProvider(inv)
        engine = Engine(db, provider, poll_s=0.01, manage_tick_s=0.5, reconcile_s=5.0)
        service = ClusterService(db, lambda: inv, engine.clock, engine.wake)
        await engine.start()
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            sub = await asyncio.to_thread(service.create, ADMIN, document(shape))
            cid = sub.cluster.id
            await _until(lambda: _ready(db, cid) >= shape.replicas, deadline_s)
            out.update(seconds=time.perf_counter() - wall, cpu_s=time.process_time() - cpu)

            with db.reading() as conn:
                nodes = node_repo.list_nodes(conn, cid)
            by_host: dict[str, list[str]] = {}
            for n in nodes:
                by_host.setdefault(n.host or "", []).append(n.name)
            lost: set[str] = set()
            hosts: list[str] = []
            for host, names in sorted(by_host.items()):
                if len(lost) >= len(nodes) // 10:
                    break
                hosts.append(host)
                lost.update(names)
            cpu, wall = time.process_time(), time.perf_counter()
            for h in hosts:
                await provider.fail_host(h)
            gone = frozenset(lost)
            await _until(lambda: _ready(db, cid, gone) >= shape.replicas, deadline_s)
            out.update(
                node_loss_s=time.perf_counter() - wall,
                node_loss_cpu_s=time.process_time() - cpu,
                servers_lost=len(lost),
            )

            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.to_thread(service.update, ADMIN, "k8s", document(shape, "app:2"))
            await _until(lambda: _rolled(db, cid, "app:2"), deadline_s)
            out.update(
                rollout_s=time.perf_counter() - wall, rollout_cpu_s=time.process_time() - cpu
            )
        finally:
            await engine.stop()
            db.dispose()
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}

"""Issue 36's model of a transition on `sim`: random cluster documents, the observed state of a
cluster, and the orphans a transition may leave. Shared by the model-based test
(tests/transitions/test_fuzz.py) and `benchmarks/transitions.py` (`sim-transition-fuzz`).

A document is drawn as a `Shape` (node groups with counts and rules, deployments of every hook
group with or without DELETE, workloads with their image and replicas, a network with a
balancer over a group or a workload), from a `random.Random` (hypothesis hands the test a
shrinking one). What is compared is what a cluster *is* once the engine settled it, never the
plan: nodes per group and whether the group's anti-affinity holds, the deployments applied per
group (rows and what the sim's nodes still run), the replicas with their revision and
readiness (rows and the sim's containers), the balancers with their listeners and members.
Node names are left out (a scale-in keeps the oldest or youngest, a fresh create numbers from
1); everything else must match a fresh create of the same document exactly.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from shoal.clock import SystemClock
from shoal.engine import Engine
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import synthetic_inventory
from shoal.model.enums import ActionKind, ClusterStatus, NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.workload_rollouts import WorkloadPhase
from shoal.providers.networking import ClusterNetworks
from shoal.providers.sim.provider import SimProvider
from shoal.service.clusters import ClusterService
from shoal.service.errors import ServiceError
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as deployment_repo
from shoal.store import nodes as node_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord, Principal

ADMIN = Principal("admin", True)
GROUPS = ("a", "b", "c")
HOOKS = ("script", "docker-compose", "kubelet", "ansible")
T = TypeVar("T")


# -- documents -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupShape:
    name: str
    count: int
    apart: bool
    """Anti-affinity by host (a grouping with one member per host)."""


@dataclass(frozen=True, slots=True)
class DeploymentShape:
    name: str
    group: str
    hook: str
    version: int
    """The config body's version: a change re-runs it (UPDATE)."""
    delete: bool
    """Declares DELETE: it runs when the deployment or its node goes."""


@dataclass(frozen=True, slots=True)
class WorkloadShape:
    name: str
    group: str
    replicas: int
    image: str
    port: int


@dataclass(frozen=True, slots=True)
class BalancerShape:
    pool: str
    """A node group or a workload."""
    port: int


@dataclass(frozen=True, slots=True)
class Shape:
    groups: tuple[GroupShape, ...]
    deployments: tuple[DeploymentShape, ...] = ()
    workloads: tuple[WorkloadShape, ...] = ()
    balancer: BalancerShape | None = None

    def _pool_port(self, b: BalancerShape) -> int:
        return next((w.port for w in self.workloads if w.name == b.pool), 8080)

    def group(self, name: str) -> GroupShape:
        return next(g for g in self.groups if g.name == name)

    def text(self, name: str) -> str:
        """The native document of this shape, named `name`."""
        out = [f"name: {name}", "node_groups:"]
        for g in self.groups:
            out += [
                f"  - name: {g.name}",
                "    profile: {type: server, flavor: m1.tiny, image: cirros}",
                f"    count: {g.count}",
            ]
        apart = [g for g in self.groups if g.apart]
        if apart:
            out.append("groupings:")
            out += [
                f"  - {{name: {g.name}-apart, members: [{g.name}], rule: anti-affinity, "
                "max_per_domain: 1}"
                for g in apart
            ]
        if self.deployments:
            out += ["software:", "  configs:"]
            for d in self.deployments:
                out += [
                    f"    {d.name}-config:",
                    f"      group: {d.hook}",
                    f"      config: {json.dumps(_config_body(d))}",
                ]
            out.append("  deployments:")
            for d in self.deployments:
                actions = "[CREATE, UPDATE, DELETE]" if d.delete else "[CREATE, UPDATE]"
                out += [
                    f"    {d.name}:",
                    f"      config: {d.name}-config",
                    f"      target: {d.group}",
                    f"      actions: {actions}",
                ]
        if self.workloads:
            out.append("workloads:")
            for w in self.workloads:
                out += [
                    f"  {w.name}:",
                    f"    replicas: {w.replicas}",
                    f"    nodes: {{groups: [{w.group}]}}",
                    f"    containers: [{{name: c, image: {w.image}, ports: [{w.port}], "
                    "resources: {cpu: 0.1}}]",
                ]
        if self.balancer is not None:
            b = self.balancer
            out += [
                "networks:",
                "  - {name: net, cidr: 10.20.0.0/24}",
                "load_balancers:",
                "  - name: front",
                "    network: net",
                f"    listeners: [{{port: {b.port}, pool: p}}]",
                f"    pools: [{{name: p, members: {b.pool}, port: {self._pool_port(b)}}}]",
            ]
        return "\n".join(out) + "\n"


def _config_body(d: DeploymentShape) -> str:
    if d.hook == "docker-compose":
        return f"{d.name}:\n  image: img:v{d.version}\n  net: host\n"
    if d.hook == "kubelet":
        return (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: " + d.name + "}\n"
            "spec:\n  hostNetwork: true\n  containers:\n"
            f"  - {{name: c, image: 'img:v{d.version}'}}\n"
        )
    if d.hook == "ansible":
        return f"- hosts: localhost\n  tasks:\n  - debug: {{msg: v{d.version}}}\n"
    return f"#!/bin/sh\necho {d.name} v{d.version}\n"


def draw_shape(rng: random.Random) -> Shape:
    """A random valid document: one to three groups of one to three servers, up to two
    deployments, two workloads and a balancer, each on a group the document has."""
    names = [g for g in GROUPS if rng.random() < 0.6] or [rng.choice(GROUPS)]
    groups = tuple(GroupShape(g, rng.randint(1, 3), rng.random() < 0.3) for g in names)
    deployments = tuple(
        DeploymentShape(
            name,
            rng.choice(names),
            rng.choice(HOOKS),
            rng.randint(1, 2),
            rng.random() < 0.5,
        )
        for name in ("d1", "d2")
        if rng.random() < 0.5
    )
    workloads: list[WorkloadShape] = []
    for name, port in (("w1", 9001), ("w2", 9002)):
        if rng.random() < 0.45:
            group = rng.choice(names)
            workloads.append(
                WorkloadShape(name, group, rng.randint(1, 3), rng.choice(("img:1", "img:2")), port)
            )
    balancer = None
    if rng.random() < 0.35:
        pools = names + [w.name for w in workloads]
        balancer = BalancerShape(rng.choice(pools), rng.choice((80, 8000)))
    return fitted(Shape(groups, deployments, tuple(workloads), balancer))


def fitted(shape: Shape) -> Shape:
    """The shape with each workload's replicas at most its group's servers: two replicas of
    one workload on one server would bind one port twice, which placement refuses (as it
    should; a refused document changes nothing and is no transition to compare)."""
    workloads = tuple(
        WorkloadShape(w.name, w.group, min(w.replicas, shape.group(w.group).count), w.image, w.port)
        for w in shape.workloads
    )
    return Shape(shape.groups, shape.deployments, workloads, shape.balancer)


# -- the observed state ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Observed:
    """What a settled cluster is, without its node names (module docstring)."""

    status: str
    nodes: tuple[tuple[str, int, bool], ...]
    """(group, servers standing, anti-affinity holds when asked for)."""
    deployments: tuple[tuple[str, str, str, str, int], ...]
    """(deployment, group, hook, status, nodes with a row)."""
    applied: tuple[tuple[str, str, str, int], ...]
    """What the sim's nodes run: (deployment, group, hook, nodes)."""
    replicas: tuple[tuple[str, str, bool, str], ...]
    """(replica, workload, ready, revision)."""
    containers: tuple[tuple[str, str], ...]
    """The sim's replica containers of the cluster: (replica, revision)."""
    balancers: tuple[tuple[str, tuple[int, ...], int], ...]
    """(balancer, listeners, members)."""


def expected(shape: Shape) -> dict[str, object]:
    """What a shape must come to, as far as the document alone says (a create's settling)."""
    return {
        "nodes": tuple(sorted((g.name, g.count, True) for g in shape.groups)),
        "deployments": tuple(
            sorted(
                (d.name, d.group, d.hook, "COMPLETE", shape.group(d.group).count)
                for d in shape.deployments
            )
        ),
        "replicas": tuple(
            sorted(
                (f"{w.name}-{i}", w.name) for w in shape.workloads for i in range(1, w.replicas + 1)
            )
        ),
    }


def matches_expected(o: Observed, shape: Shape) -> bool:
    want = expected(shape)
    return (
        o.status == "ACTIVE"
        and o.nodes == want["nodes"]
        and o.deployments == want["deployments"]
        and tuple((r[0], r[1]) for r in o.replicas) == want["replicas"]
        and all(r[2] for r in o.replicas)
        and len(o.balancers) == (1 if shape.balancer else 0)
        and all(b[2] == _members(shape) for b in o.balancers)
    )


def _members(shape: Shape) -> int:
    b = shape.balancer
    if b is None:
        return 0
    w = next((w for w in shape.workloads if w.name == b.pool), None)
    return w.replicas if w is not None else shape.group(b.pool).count


# -- a rig: one engine on sim, run on a thread of its own --------------------------------------


@dataclass
class Rig:
    """A service and an engine over one store and a sim provider; the engine's loop runs on
    a thread, so a synchronous test (a hypothesis state machine) drives the service and reads
    the store while the engine works."""

    db: Database
    inventory: Inventory = field(default_factory=lambda: synthetic_inventory(48, 2))
    provider: SimProvider = field(init=False)
    engine: Engine = field(init=False)
    service: ClusterService = field(init=False)
    _loop: asyncio.AbstractEventLoop = field(init=False)
    _thread: threading.Thread = field(init=False)
    refusals: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.provider = SimProvider(self.inventory)
        self.engine = Engine(
            self.db,
            self.provider,
            clock=SystemClock(),
            poll_s=0.02,
            retry=RetryPolicy(attempts=3, backoff_s=0.0),
        )
        assert self.engine.manager is not None
        self.engine.manager.reconcile_s = 0.15
        self.engine.deployer.tick_s = 0.1
        inv = self.inventory
        self.service = ClusterService(self.db, lambda: inv, SystemClock(), self.engine.wake)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.call(self.engine.start())

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=300)

    def close(self) -> None:
        try:
            self.call(self.engine.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()

    # -- changing ------------------------------------------------------------------------------

    def create(self, name: str, shape: Shape) -> str | None:
        """The new cluster's id; None when the service refused the document."""
        try:
            return self.service.create(ADMIN, shape.text(name)).cluster.id
        except ServiceError:
            return None

    def apply(self, name: str, shape: Shape) -> bool:
        """Whether the service took the document (a refused one changes nothing)."""
        try:
            self.service.update(ADMIN, name, shape.text(name))
        except ServiceError as e:
            self.refusals.append(f"{name}: {e}")
            return False
        return True

    def cluster_id(self, name: str) -> str | None:
        with self.db.reading() as conn:
            found = cluster_repo.get_cluster(conn, name)
        return None if found is None else found.id

    def delete(self, name: str) -> None:
        self.service.delete(ADMIN, name)

    # -- looking -------------------------------------------------------------------------------

    def rolled_back(self, cluster_id: str) -> list[str]:
        """Why each of the cluster's workload rollouts that failed did (none: [])."""
        with self.db.reading() as conn:
            rows = rollout_repo.of_cluster(conn, cluster_id)
        failed = (WorkloadPhase.ROLLING_BACK, WorkloadPhase.ROLLED_BACK)
        return [f"{r.workload}: {r.reason}" for r in rows if r.phase in failed]

    def observe(self, cluster_id: str) -> Observed:
        with self.db.reading() as conn:
            c = cluster_repo.get_cluster(conn, cluster_id)
            assert c is not None
            nodes = [
                n
                for n in node_repo.list_nodes(conn, cluster_id)
                if n.deleted_at is None and n.kind is NodeKind.SERVER
            ]
            rows = deployment_repo.for_cluster(conn, cluster_id)
            replicas = replica_repo.load(conn, [cluster_id])[cluster_id]
            live_deploys = action_repo.live_inputs(conn, cluster_id, ActionKind.NODE_DEPLOY)
        status = c.status.value if c.lock_action_id is None and not live_deploys else "BUSY"
        by_id = {n.id: n for n in nodes}
        by_pid = {n.provider_id: n for n in nodes if n.provider_id}
        return Observed(
            status,
            _nodes(c, nodes),
            _count(
                (r.name, by_id[r.node_id].group_name, r.hook, r.status.value)
                for r in rows
                if r.node_id in by_id
            ),
            _count(
                (dep, by_pid[pid].group_name, hook)
                for (pid, dep), hook in self.provider.deployments.applied.items()  # type: ignore[union-attr]
                if pid in by_pid
            ),
            tuple(
                sorted(
                    (r.replica, r.workload, r.ready, r.revision or "") for r in replicas.values()
                )
            ),
            tuple(
                sorted(
                    (key.split("/", 1)[1], c.revision)
                    for key, c in self.provider.replicas.containers()
                    if key.startswith(f"{cluster_id}/")
                )
            ),
            self._balancers(cluster_id),
        )

    def _balancers(self, cluster_id: str) -> tuple[tuple[str, tuple[int, ...], int], ...]:
        held: ClusterNetworks | None = self.provider.networking.applied(cluster_id)
        if held is None:
            return ()
        states = self.call(self.provider.networking.balancers(held))
        return tuple(sorted((b.name, b.listeners, len(b.members)) for b in states))

    def orphans(self) -> list[str]:
        """What nothing declares any more, over every cluster of the rig: servers without a
        node, containers without a replica row, what a node runs without a deployment row,
        rows on nodes that are gone, networking of clusters that are gone."""
        found: list[str] = []
        with self.db.reading() as conn:
            clusters = {c.id: c for c in cluster_repo.list_clusters(conn, None)}
            nodes = [
                n
                for cid in clusters
                for n in node_repo.list_nodes(conn, cid)
                if n.deleted_at is None
            ]
            replicas = replica_repo.load(conn, list(clusters))
            rows = [r for cid in clusters for r in deployment_repo.for_cluster(conn, cid)]
        live_pids = {n.provider_id for n in nodes if n.provider_id}
        live_ids = {n.id for n in nodes}
        servers = self.call(self.provider.list_resources())
        found += [f"server {s.id} with no node" for s in servers if s.id not in live_pids]
        keys = {f"{cid}/{r}" for cid, rs in replicas.items() for r in rs}
        found += [
            f"container {k} with no replica row"
            for k, _ in self.provider.replicas.containers()
            if k not in keys
        ]
        ran = {
            (n.provider_id, r.name)
            for r in rows
            for n in nodes
            if n.id == r.node_id and r.status.value == "COMPLETE" and r.action.value != "DELETE"
        }
        applied = self.provider.deployments.applied  # type: ignore[union-attr]
        found += [f"deployment {d} still on {pid}" for pid, d in applied if (pid, d) not in ran]
        by_cluster_nodes: dict[str, set[str]] = {}
        for n in nodes:
            by_cluster_nodes.setdefault(n.cluster_id or "", set()).add(n.name)
        for cid, rs in replicas.items():
            for r in rs.values():
                if r.node not in by_cluster_nodes.get(cid, set()):
                    found.append(f"replica {r.replica} on {r.node}, a node that is gone")
        found += [
            f"networking of cluster {cid} that is gone"
            for cid in self.call(self.provider.networking.clusters())
            if cid not in clusters
        ]
        del live_ids
        return found


def _nodes(c: ClusterRecord, nodes: list[Any]) -> tuple[tuple[str, int, bool], ...]:
    standing = [n for n in nodes if n.status in (NodeStatus.ACTIVE, NodeStatus.WARNING)]
    groups: dict[str, list[Any]] = {}
    for n in standing:
        groups.setdefault(n.group_name, []).append(n)
    apart = {
        str(g["members"][0])
        for g in c.document.get("groupings", ()) or ()
        if g.get("rule") == "anti-affinity"
    }
    return tuple(
        sorted(
            (name, len(ns), name not in apart or len({n.host for n in ns}) == len(ns))
            for name, ns in groups.items()
        )
    )


def _count(items: Any) -> tuple[Any, ...]:
    counts: dict[tuple[str, ...], int] = {}
    for key in items:
        counts[key] = counts.get(key, 0) + 1
    return tuple(sorted((*k, n) for k, n in counts.items()))


def wait_for(check: Callable[[], T | None], timeout_s: float = 120.0) -> T | None:
    """`check`'s first truthy answer, or None at the deadline (the caller says what failed)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            return None
        time.sleep(0.05)


def settled(status: ClusterStatus) -> bool:
    return status in (ClusterStatus.ACTIVE, ClusterStatus.WARNING, ClusterStatus.ERROR)


# -- transitions: one step over many clusters, each compared with a fresh create ------------


POOL = tuple(draw_shape(random.Random(i)) for i in range(48))
"""Whole documents a transition switches to: a pool, so a fresh create of each is made once
(the oracle's cache) while every pair of them is a transition to try."""


def mutate(rng: random.Random, shape: Shape) -> Shape:
    """One change a person would make: scale a group, switch a deployment's hook group, scale
    or re-image a workload; or another whole document (groups, deployments, workloads and the
    balancer added, removed or moved at once)."""
    if rng.random() < 0.7:
        return rng.choice(POOL)
    pick = rng.randrange(3)
    g = rng.choice(shape.groups)
    if pick == 0:
        groups = tuple(
            GroupShape(x.name, rng.randint(1, 3), x.apart) if x == g else x for x in shape.groups
        )
        return fitted(Shape(groups, shape.deployments, shape.workloads, shape.balancer))
    if pick == 1 and shape.deployments:
        d = rng.choice(shape.deployments)
        switched = DeploymentShape(d.name, d.group, rng.choice(HOOKS), d.version, d.delete)
        others = tuple(x if x != d else switched for x in shape.deployments)
        return Shape(shape.groups, others, shape.workloads, shape.balancer)
    if pick == 2 and shape.workloads:
        w = rng.choice(shape.workloads)
        changed = WorkloadShape(
            w.name, w.group, rng.randint(1, 3), rng.choice(("img:1", "img:2")), w.port
        )
        others_w = tuple(x if x != w else changed for x in shape.workloads)
        return fitted(Shape(shape.groups, shape.deployments, others_w, shape.balancer))
    return rng.choice(POOL)


@dataclass
class Tally:
    steps: int = 0
    divergences: int = 0
    orphans: int = 0
    refused: int = 0
    rolled_back: int = 0
    """Steps whose only difference from a fresh create is a workload's revision, where the
    cluster says why: its rollout failed and rolled back (a truthful status, not a divergence;
    reported with its reason, issue 36's open case)."""
    notes: list[str] = field(default_factory=list)
    rollbacks: list[str] = field(default_factory=list)


class Oracle:
    """The observed state of a fresh create of each shape, made once per shape (the same
    document always comes to the same state; a transition must come to it too)."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        self.known: dict[Shape, Observed | None] = {}
        self._n = 0
        self._deleting: list[str] = []

    def of(self, shapes: list[Shape]) -> None:
        """Create every shape not known yet at once, wait for each, look, delete."""
        made: list[tuple[Shape, str]] = []
        for s in dict.fromkeys(shapes):
            if s in self.known:
                continue
            self._n += 1
            name = f"oracle-{self._n}"
            cid = self.rig.create(name, s)
            if cid is None:
                self.known[s] = None
                continue
            made.append((s, cid))
        for s, cid in made:
            got = wait_for(lambda cid=cid, s=s: _settled_as(self.rig, cid, s))
            if got is None:
                raise AssertionError(
                    f"a fresh create never settled as its document says: {s}\n"
                    f"{self.rig.observe(cid)}"
                )
            self.known[s] = got
            self.rig.delete(cid)
            self._deleting.append(cid)

    def drained(self) -> None:
        """Until every oracle cluster is gone (orphan checks look at the whole rig)."""

        def gone() -> bool:
            with self.rig.db.reading() as conn:
                return all(cluster_repo.get_cluster(conn, cid) is None for cid in self._deleting)

        if wait_for(gone) is None:
            raise AssertionError("oracle clusters were not deleted")
        self._deleting.clear()


def _settled_as(rig: Rig, cid: str, shape: Shape) -> Observed | None:
    o = rig.observe(cid)
    return o if matches_expected(o, shape) else None


def step(
    rig: Rig,
    oracle: Oracle,
    clusters: dict[str, Shape],
    shapes: dict[str, Shape],
    tally: Tally,
    timeout_s: float = 120.0,
) -> list[str]:
    """Apply each cluster's new shape at once, then compare each with a fresh create of its
    document and look for orphans. Returns what diverged (also counted in `tally`)."""
    accepted = {name: s for name, s in shapes.items() if rig.apply(name, s)}
    tally.refused += len(shapes) - len(accepted)
    clusters.update(accepted)
    oracle.of(list(accepted.values()))
    problems: list[str] = []
    with rig.db.reading() as conn:
        ids = {name: cluster_repo.get_cluster(conn, name) for name in accepted}
    for name, s in accepted.items():
        c = ids[name]
        assert c is not None
        want = oracle.known.get(s)
        if want is None:
            continue  # refused as a fresh create, taken as a change: nothing to compare with
        got = wait_for(lambda c=c, want=want: rig.observe(c.id) == want, timeout_s)
        tally.steps += 1
        if got is None:
            seen = rig.observe(c.id)
            why = rig.rolled_back(c.id)
            if why and _without_revisions(seen) == _without_revisions(want):
                tally.rolled_back += 1
                tally.rollbacks.append(f"{name} → {s}: {'; '.join(why)}")
                continue
            tally.divergences += 1
            problems.append(f"{name} → {s}\n  want {want}\n  got  {seen}")
    oracle.drained()
    left = wait_for(lambda: not rig.orphans(), 30.0)
    if left is None:
        found = rig.orphans()
        tally.orphans += len(found)
        problems += found
    tally.notes += problems
    return problems


def _without_revisions(o: Observed) -> Observed:
    """`o` with its replicas' and containers' template revisions set aside."""
    return replace(
        o,
        replicas=tuple((r, w, ready, "") for r, w, ready, _ in o.replicas),
        containers=tuple((r, "") for r, _ in o.containers),
    )


def created(rig: Rig, oracle: Oracle, shapes: dict[str, Shape], tally: Tally) -> dict[str, Shape]:
    """Create these clusters at once, each compared with the oracle's fresh create of its
    document (a create is a transition from nothing; not counted in `steps`). The clusters
    made, by name."""
    made = {name: s for name, s in shapes.items() if rig.create(name, s) is not None}
    tally.refused += len(shapes) - len(made)
    oracle.of(list(made.values()))
    for name, s in made.items():
        want = oracle.known.get(s)
        cid = rig.cluster_id(name)
        if want is None or cid is None:
            tally.notes.append(f"{name}: {s} created here, refused as the oracle's create")
            continue
        if not wait_for(lambda cid=cid, want=want: rig.observe(cid) == want):
            tally.divergences += 1
            tally.notes.append(f"{name} created from {s}\n  want {want}\n  got  {rig.observe(cid)}")
    oracle.drained()
    return made

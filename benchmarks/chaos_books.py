"""The books of `benchmarks/chaos_parts.py`'s scenarios: the store against the cloud's file.

Servers are counted by `benchmarks/chaos.py`'s `books`; these are the new parts': workload
replicas (rows in the store, containers in the sim's shared file), deployments, workload
rollouts and balancers' members. What each count means is in chaos_parts.py's docstring.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, text

Doc = dict[str, Any]


@dataclass
class Books:
    duplicates: int = 0
    orphans: int = 0
    missing: int = 0
    stuck: int = 0
    samples: list[str] = field(default_factory=list)

    def note(self, what: str, n: int, sample: str) -> None:
        if n:
            setattr(self, what, getattr(self, what) + n)
            if len(self.samples) < 12:
                self.samples.append(f"{what}: {sample}")


@dataclass
class Store:
    clusters: dict[str, tuple[str, Doc]]
    """id -> (name, document) of live clusters."""
    live_nodes: set[tuple[str, str]]
    """(cluster id, node name) of ACTIVE or WARNING nodes."""
    any_nodes: set[str]
    """Ids of nodes not deleted."""
    replicas: dict[tuple[str, str], str]
    """(cluster id, replica) -> workload."""
    deployments: list[tuple[str, str, str, str]]
    """(node id, node name, deployment, status)."""
    rolling: list[tuple[str, str, str, str, str | None, int]]
    """Rollouts not ended: cluster id, workload, phase, batch, reason, batches."""


@dataclass
class Cloud:
    running: Counter[str]
    """Containers running (not exited, on a server that exists), by key."""
    networks: dict[str, dict[str, list[str]]]
    """Cluster id -> balancer -> member names, as last applied."""


def _declared_workloads(document: Doc) -> dict[str, int]:
    return {n: int(w.get("replicas", 1)) for n, w in (document.get("workloads") or {}).items()}


def _pool_groups(document: Doc) -> set[str]:
    return {
        p["members"]
        for lb in document.get("load_balancers") or []
        for p in lb.get("pools") or []
        if isinstance(p.get("members"), str)
    }


def _rows(c: Connection, sql: str) -> list[Any]:
    return list(c.execute(text(sql)).all())


def read_store(db: Engine) -> Store:
    with db.connect() as c:
        return Store(
            clusters={
                str(i): (str(n), doc if isinstance(doc, dict) else json.loads(doc))
                for i, n, doc in _rows(
                    c, "SELECT id, name, document FROM clusters WHERE deleted_at IS NULL"
                )
            },
            live_nodes={
                (str(cid), str(name))
                for cid, name in _rows(
                    c,
                    "SELECT cluster_id, name FROM nodes WHERE deleted_at IS NULL "
                    "AND status IN ('ACTIVE', 'WARNING')",
                )
            },
            any_nodes={
                str(i) for (i,) in _rows(c, "SELECT id FROM nodes WHERE deleted_at IS NULL")
            },
            replicas={
                (str(cid), str(rep)): str(w)
                for cid, rep, w in _rows(
                    c, "SELECT cluster_id, replica, workload FROM workload_replicas"
                )
            },
            deployments=[
                (str(nid), str(node), str(dep), str(status))
                for nid, node, dep, status in _rows(
                    c, "SELECT node_id, node_name, name, status FROM deployments"
                )
            ],
            rolling=[
                (str(cid), str(w), str(phase), str(batch), why, int(n))
                for cid, w, phase, batch, why, n in _rows(
                    c,
                    "SELECT cluster_id, workload, phase, batch, reason, batches "
                    "FROM workload_rollouts WHERE phase NOT IN ('COMPLETE', 'ROLLED_BACK')",
                )
            ],
        )


def read_cloud(sim_state: Path) -> Cloud:
    cloud = sqlite3.connect(sim_state)
    try:
        servers = {
            str(i) for (i,) in cloud.execute("SELECT id FROM resources WHERE kind = 'server'")
        }
        running = Counter(
            str(k)
            for k, s, exited in cloud.execute("SELECT key, server_id, exited FROM containers")
            if not exited and str(s) in servers  # a server's end ends its containers
        )
        networks = {
            str(cid): json.loads(b)
            for cid, b in cloud.execute("SELECT cluster, balancers FROM networks").fetchall()
        }
    finally:
        cloud.close()
    return Cloud(running, networks)


def _replicas(store: Store, cloud: Cloud, out: Books) -> None:
    for key, n in cloud.running.items():
        out.note("duplicates", n - 1, f"container {key} x{n}")
        cid, _, rep = key.partition("/")
        if (cid, rep) not in store.replicas:
            out.note("orphans", 1, f"container {key} without a replica row")
    for (cid, rep), w in store.replicas.items():
        declared = _declared_workloads(store.clusters[cid][1]) if cid in store.clusters else {}
        if w not in declared:
            out.note("orphans", 1, f"replica row {cid}/{rep} of an undeclared workload {w}")
        elif f"{cid}/{rep}" not in cloud.running:
            out.note("orphans", 1, f"replica row {cid}/{rep} without a running container")
    for cid, (name, doc) in store.clusters.items():
        for w, n in _declared_workloads(doc).items():
            have = sum(1 for (c, _), x in store.replicas.items() if c == cid and x == w)
            out.note("missing", max(0, n - have), f"{name}: workload {w} {have}/{n}")
            # A container is keyed by its replica, so two for one replica cannot be; more
            # running than declared (a surge replica left after its rollout) is the duplicate.
            up = sum(
                1
                for key in cloud.running
                if key.startswith(f"{cid}/") and store.replicas.get(_split(key)) == w
            )
            out.note("duplicates", max(0, up - n), f"{name}: workload {w} runs {up} for {n}")
    for cid, w, phase, batch, why, batches in store.rolling:
        rows = sorted(r for (c, r), x in store.replicas.items() if c == cid and x == w)
        out.note(
            "stuck", 1, f"rollout of {cid}/{w}: {phase} #{batches} {batch} ({why}); rows {rows}"
        )


def _split(key: str) -> tuple[str, str]:
    cid, _, rep = key.partition("/")
    return cid, rep


def _deployments(store: Store, out: Books) -> None:
    for nid, node, dep, status in store.deployments:
        if nid not in store.any_nodes:
            continue  # a deleted node's rows stay for its history (store/deployments.py)
        if status not in ("COMPLETE", "FAILED"):
            out.note("stuck", 1, f"deployment {dep} on {node}: {status}")


def _balancers(store: Store, cloud: Cloud, out: Books) -> None:
    for cid, held in cloud.networks.items():
        if cid not in store.clusters:
            out.note("orphans", 1, f"networking of gone cluster {cid}")
            continue
        name, doc = store.clusters[cid]
        pools = _pool_groups(doc)
        expected = sorted(
            n
            for (c, n) in store.live_nodes
            if c == cid and "~" not in n and n.rsplit("-", 1)[0] in pools
        )
        for lb, members in held.items():
            counts = Counter(members)
            out.note("duplicates", sum(k - 1 for k in counts.values()), f"{name}/{lb} {members}")
            strays = [m for m in counts if (cid, m) not in store.live_nodes]
            out.note("orphans", len(strays), f"{name}/{lb} members {strays} are no live node")
            absent = [m for m in expected if m not in counts]
            out.note("missing", len(absent), f"{name}/{lb} lacks {absent}")
    for cid, (name, doc) in store.clusters.items():
        if doc.get("load_balancers") and cid not in cloud.networks:
            out.note("missing", 1, f"{name}: balancer never applied")


def parts_books(db: Engine, sim_state: Path, out: Books) -> None:
    """Replicas, deployments, rollouts and balancers: the store against the cloud's file."""
    store, cloud = read_store(db), read_cloud(sim_state)
    _replicas(store, cloud, out)
    _deployments(store, out)
    _balancers(store, cloud, out)

"""Reading a Senlin deployment's database for `shoal import senlin`, strictly read-only.

Senlin's own tables (schema of Senlin 16, `senlin-manage db_sync`) are reflected, not declared,
so a column a release lacks is simply absent; only SELECTs are issued, on MySQL/MariaDB inside a
`READ ONLY` transaction that is rolled back, so the import can never write to Senlin's database.
Senlin stores its maps (`spec`, `meta_data`, `params`...) as JSON text; they are parsed here and
handed on as typed records.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, MetaData, Table, create_engine, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError

UNFINISHED = (
    "INIT",
    "WAITING",
    "READY",
    "RUNNING",
    "SUSPENDED",
    "WAITING_LIFECYCLE_COMPLETION",
)
"""Senlin action statuses of work not yet done: a cluster with one is still Senlin's."""

TABLES = ("profile", "policy", "cluster", "node", "cluster_policy", "receiver", "cluster_lock")


@dataclass(frozen=True, slots=True)
class SenlinProfile:
    id: str
    name: str
    type: str
    spec: dict[str, Any]
    project: str
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SenlinPolicy:
    id: str
    name: str
    type: str
    spec: dict[str, Any]
    project: str


@dataclass(frozen=True, slots=True)
class SenlinBinding:
    policy_id: str
    enabled: bool
    priority: int


@dataclass(frozen=True, slots=True)
class SenlinNode:
    id: str
    name: str
    physical_id: str | None
    cluster_id: str | None
    profile_id: str | None
    project: str
    index: int
    role: str
    status: str
    status_reason: str
    metadata: dict[str, Any]
    created_at: float


@dataclass(frozen=True, slots=True)
class SenlinReceiverRow:
    id: str
    name: str
    type: str
    cluster_id: str | None
    project: str
    action: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SenlinClusterRow:
    id: str
    name: str
    project: str
    profile_id: str
    min_size: int
    max_size: int
    desired_capacity: int
    timeout: int | None
    status: str
    metadata: dict[str, Any]
    config: dict[str, Any]
    nodes: tuple[SenlinNode, ...] = ()
    bindings: tuple[SenlinBinding, ...] = ()
    receivers: tuple[SenlinReceiverRow, ...] = ()
    locked_by: tuple[str, ...] = ()
    """Action ids in Senlin's `cluster_lock` row for this cluster."""
    unfinished: tuple[str, ...] = ()
    """`ACTION_NAME id status` of Senlin actions on this cluster or its nodes not yet done."""


@dataclass(frozen=True, slots=True)
class SenlinSnapshot:
    """What a Senlin database holds that an import reads, in one read-only transaction."""

    clusters: tuple[SenlinClusterRow, ...]
    profiles: dict[str, SenlinProfile]
    policies: dict[str, SenlinPolicy]
    standalone: tuple[SenlinNode, ...] = ()
    loose_receivers: tuple[SenlinReceiverRow, ...] = ()
    """Receivers of no cluster read here (none, or a deleted one)."""
    credentials: int = 0
    """How many trusts Senlin's `credential` table holds (never read beyond counting)."""
    missing_tables: tuple[str, ...] = field(default=())


class SenlinSourceError(Exception):
    """The database cannot be read as a Senlin database (unreachable, or not Senlin's)."""


def _map(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str | bytes) and value:
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, str | bytes) and value:
        try:
            parsed = json.loads(value)
        except ValueError:
            return []
        return parsed if isinstance(parsed, list) else []
    return []


def _stamp(value: Any) -> float:
    return float(value.timestamp()) if hasattr(value, "timestamp") else 0.0


class SenlinUrlError(ValueError):
    """The URL does not name a Senlin database Shoal can read."""


MYSQL_DRIVERS = ("mysql", "mysql+pymysql", "mariadb", "mariadb+pymysql")
CONNECT_TIMEOUT_S = 10


def source_url(url: str) -> str:
    """`url` as the import opens it (MySQL/MariaDB through PyMySQL, Senlin's own driver), or
    `SenlinUrlError` saying what is wrong with it."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise SenlinUrlError(
            "not a database URL; expected mysql+pymysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
        ) from None
    if parsed.drivername not in MYSQL_DRIVERS:
        raise SenlinUrlError(
            f"'{parsed.drivername}' databases are not read; Senlin's is MySQL or MariaDB "
            "(mysql+pymysql://...)"
        )
    if not parsed.host or not parsed.database:
        raise SenlinUrlError("the URL must name a host and a database")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise SenlinUrlError(f"port {parsed.port} is not a TCP port")
    return parsed.set(drivername="mysql+pymysql").render_as_string(hide_password=False)


def _engine(url: str) -> Engine:
    return create_engine(
        source_url(url), pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
    )


@contextmanager
def _read_only(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as conn:
        if engine.dialect.name in ("mysql", "mariadb"):
            conn.execute(text("SET SESSION TRANSACTION READ ONLY"))
        elif engine.dialect.name == "postgresql":
            conn.execute(text("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"))
        try:
            yield conn
        finally:
            conn.rollback()


def read_snapshot(url: str, project: str | None = None) -> SenlinSnapshot:
    """Every cluster (of `project`, when given) with its nodes, bindings, receivers, locks and
    unfinished actions; the profiles and policies they use; standalone nodes."""
    engine = _engine(url)
    try:
        with _read_only(engine) as conn:
            return _read(conn, project)
    except SenlinSourceError:
        raise
    except Exception as e:
        reason = getattr(e, "orig", None) or e  # the driver's words, without SQLAlchemy's
        raise SenlinSourceError(f"cannot read the Senlin database: {reason}") from e
    finally:
        engine.dispose()


def _read(conn: Connection, project: str | None) -> SenlinSnapshot:
    md = MetaData()
    md.reflect(conn, only=lambda name, _md: name in (*TABLES, "action", "credential"))
    missing = tuple(t for t in TABLES if t not in md.tables)
    if "cluster" not in md.tables or "node" not in md.tables or "profile" not in md.tables:
        raise SenlinSourceError(
            "not a Senlin database: no cluster, node or profile table "
            f"(missing: {', '.join(missing)})"
        )
    t = md.tables
    cq = select(t["cluster"])
    if project is not None:
        cq = cq.where(t["cluster"].c.project == project)
    crow = list(conn.execute(cq.order_by(t["cluster"].c.created_at)).mappings())
    ids = {r["id"] for r in crow}
    nq = select(t["node"])
    if project is not None:
        nq = nq.where(t["node"].c.project == project)
    nodes = [_node(r) for r in conn.execute(nq.order_by(t["node"].c.index)).mappings()]
    by_cluster: dict[str, list[SenlinNode]] = {}
    for n in nodes:
        if n.cluster_id:
            by_cluster.setdefault(n.cluster_id, []).append(n)
    bindings = _bindings(conn, t.get("cluster_policy"))
    receivers = _receivers(conn, t.get("receiver"))
    locks = _locks(conn, t.get("cluster_lock"))
    node_cluster = {n.id: n.cluster_id for n in nodes if n.cluster_id}
    busy = _unfinished(conn, t.get("action"), node_cluster)
    clusters = tuple(
        SenlinClusterRow(
            id=r["id"],
            name=r["name"] or "",
            project=r["project"],
            profile_id=r["profile_id"],
            min_size=int(r["min_size"] or 0),
            max_size=-1 if r["max_size"] is None else int(r["max_size"]),
            desired_capacity=int(r["desired_capacity"] or 0),
            timeout=None if r["timeout"] is None else int(r["timeout"]),
            status=r["status"] or "",
            metadata=_map(r["meta_data"]),
            config=_map(r.get("config")),
            nodes=tuple(by_cluster.get(r["id"], ())),
            bindings=tuple(bindings.get(r["id"], ())),
            receivers=tuple(receivers.get(r["id"], ())),
            locked_by=tuple(locks.get(r["id"], ())),
            unfinished=tuple(busy.get(r["id"], ())),
        )
        for r in crow
    )
    used_profiles = {c.profile_id for c in clusters} | {n.profile_id for n in nodes if n.profile_id}
    profiles = {
        r["id"]: SenlinProfile(
            r["id"], r["name"] or "", r["type"], _map(r["spec"]), r["project"], _map(r["meta_data"])
        )
        for r in conn.execute(select(t["profile"])).mappings()
        if r["id"] in used_profiles
    }
    used_policies = {b.policy_id for c in clusters for b in c.bindings}
    policies: dict[str, SenlinPolicy] = {}
    if "policy" in t and used_policies:
        for r in conn.execute(select(t["policy"])).mappings():
            if r["id"] in used_policies:
                policies[r["id"]] = SenlinPolicy(
                    r["id"], r["name"] or "", r["type"], _map(r["spec"]), r["project"]
                )
    credentials = 0
    if "credential" in t:
        credentials = len(list(conn.execute(select(t["credential"].c.user))))
    loose = tuple(
        r
        for cid, rs in receivers.items()
        if cid not in ids
        for r in rs
        if project is None or r.project == project
    )
    return SenlinSnapshot(
        clusters=clusters,
        loose_receivers=loose,
        profiles=profiles,
        policies=policies,
        standalone=tuple(n for n in nodes if not n.cluster_id or n.cluster_id not in ids),
        credentials=credentials,
        missing_tables=missing,
    )


def _node(r: Any) -> SenlinNode:
    return SenlinNode(
        id=r["id"],
        name=r["name"] or "",
        physical_id=r["physical_id"] or None,
        cluster_id=r["cluster_id"] or None,
        profile_id=r["profile_id"],
        project=r["project"],
        index=int(r["index"] or 0),
        role=r["role"] or "",
        status=r["status"] or "",
        status_reason=r["status_reason"] or "",
        metadata=_map(r["meta_data"]),
        created_at=_stamp(r["created_at"]),
    )


def _bindings(conn: Connection, table: Table | None) -> dict[str, list[SenlinBinding]]:
    out: dict[str, list[SenlinBinding]] = {}
    if table is None:
        return out
    for r in conn.execute(select(table).order_by(table.c.priority)).mappings():
        out.setdefault(r["cluster_id"], []).append(
            SenlinBinding(r["policy_id"], bool(r["enabled"]), int(r["priority"] or 0))
        )
    return out


def _receivers(conn: Connection, table: Table | None) -> dict[str, list[SenlinReceiverRow]]:
    out: dict[str, list[SenlinReceiverRow]] = {}
    if table is None:
        return out
    for r in conn.execute(select(table).order_by(table.c.created_at)).mappings():
        out.setdefault(r["cluster_id"] or "", []).append(
            SenlinReceiverRow(
                r["id"],
                r["name"] or "",
                r["type"] or "",
                r["cluster_id"],
                r["project"] or "",
                r["action"] or "",
                _map(r["params"]),
            )
        )
    return out


def _locks(conn: Connection, table: Table | None) -> dict[str, list[str]]:
    if table is None:
        return {}
    return {
        r["cluster_id"]: [str(a) for a in _list(r["action_ids"])] or ["?"]
        for r in conn.execute(select(table)).mappings()
    }


def _unfinished(
    conn: Connection, table: Table | None, node_cluster: Mapping[str, str | None]
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if table is None:
        return out
    q = select(table).where(table.c.status.in_(UNFINISHED))
    for r in conn.execute(q).mappings():
        cluster = r.get("cluster_id") or node_cluster.get(r["target"]) or r["target"]
        out.setdefault(str(cluster), []).append(f"{r['action']} {r['id']} {r['status']}")
    return out

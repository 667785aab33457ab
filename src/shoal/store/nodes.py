"""Node rows: a node's claim on a host is recorded here before any provider call."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, fields
from itertools import compress
from operator import attrgetter, is_not
from typing import Any

from sqlalchemy import Connection, Text, case, cast, func, literal_column, or_, select, tuple_
from sqlalchemy.sql.expression import ColumnClause

from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.store.bulk import insert_columns, update_rows
from shoal.store.records import CHANGE_COLUMNS, UNSET, NewNode, NodeChange, NodeRecord
from shoal.store.reservations import reserved_by_host
from shoal.store.tables import clusters, nodes


def insert_nodes(conn: Connection, rows: Sequence[NewNode]) -> None:
    # Column by column, each read off every row at once (issue 23: a dict per row, then
    # psycopg's formatting of each, was some 12 us a node of a 100,000-node plan).
    columns: dict[str, Sequence[object]] = {
        f: list(map(attrgetter(f), rows)) for f in _NEW_NODE_COLUMNS
    }
    demands = list(map(attrgetter("demand"), rows))
    for f in _DEMAND_COLUMNS:
        columns[f] = list(map(attrgetter(f), demands))
    columns["deleted_at"] = [None] * len(rows)
    insert_columns(conn, nodes, columns, len(rows))


_NEW_NODE_COLUMNS = tuple(f.name for f in fields(NewNode) if f.name != "demand")
"""`NewNode`'s fields that are columns of their own (`NewNode.columns()`'s)."""
_DEMAND_COLUMNS = tuple(f.name for f in fields(Demand))


def list_nodes(
    conn: Connection, cluster_id: str, *, include_deleted: bool = False
) -> list[NodeRecord]:
    q = (
        select(nodes)
        .where(nodes.c.cluster_id == cluster_id)
        .order_by(nodes.c.created_at, nodes.c.name)
    )
    if not include_deleted:
        q = q.where(nodes.c.deleted_at.is_(None))
    return [NodeRecord.from_row(r) for r in conn.execute(q).mappings()]


@dataclass(frozen=True)
class Standing:
    """A cluster's live nodes as its settled status judges them, counted in SQL (issue 23:
    closing a 100,000-node create read every node row to count them)."""

    rows: int
    """Live node rows, whatever their status or name."""
    current: int
    """Those standing for declared nodes: not on their way out, not renamed (`~`)."""
    troubled: int
    """Current nodes not ACTIVE."""
    samples: list[NodeRecord]
    """The first few troubled ones, in `list_nodes`' order."""


def standing(conn: Connection, cluster_id: str, samples: int) -> Standing:
    """What `engine/settle.py` judges a cluster by, without reading its nodes one by one."""
    live = (nodes.c.cluster_id == cluster_id) & nodes.c.deleted_at.is_(None)
    current = nodes.c.status.not_in(
        [NodeStatus.DELETING, NodeStatus.DELETED]
    ) & ~nodes.c.name.contains("~", autoescape=True)
    troubled = current & (nodes.c.status != NodeStatus.ACTIVE)
    row = conn.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((current, 1), else_=0)), 0),
            func.coalesce(func.sum(case((troubled, 1), else_=0)), 0),
        ).where(live)
    ).one()
    found = conn.execute(
        select(nodes)
        .where(live, troubled)
        .order_by(nodes.c.created_at, nodes.c.name)
        .limit(samples)
    ).mappings()
    return Standing(int(row[0]), int(row[1]), int(row[2]), [NodeRecord.from_row(r) for r in found])


@dataclass(frozen=True)
class GroupTally:
    """One node group's live nodes counted in SQL (issue 23: a cluster view of 100,000 nodes
    summarises them instead of reading every row)."""

    group: str
    by_status: dict[NodeStatus, int] = field(default_factory=dict)
    replicas: int = 0
    """Distinct replica indexes: a replica may be several nodes (a server and its volumes)."""


def tally_nodes(conn: Connection, cluster_id: str) -> dict[str, GroupTally]:
    """The cluster's live nodes counted per group and status, and its replicas per group."""
    live = (nodes.c.cluster_id == cluster_id) & nodes.c.deleted_at.is_(None)
    counts: dict[str, dict[NodeStatus, int]] = {}
    q = (
        select(nodes.c.group_name, nodes.c.status, func.count())
        .where(live)
        .group_by(nodes.c.group_name, nodes.c.status)
    )
    for group, status, n in conn.execute(q):
        counts.setdefault(group, {})[NodeStatus(status)] = int(n)
    q2 = (
        select(nodes.c.group_name, func.count(nodes.c.replica.distinct()))
        .where(live)
        .group_by(nodes.c.group_name)
    )
    replicas = {g: int(n) for g, n in conn.execute(q2)}
    return {
        g: GroupTally(g, by_status, replicas.get(g, 0)) for g, by_status in sorted(counts.items())
    }


def page_nodes(
    conn: Connection,
    *,
    cluster_id: str | None,
    project_id: str | None,
    limit: int,
    marker: str | None,
) -> tuple[list[NodeRecord], bool] | None:
    """Up to `limit` live nodes after the node `marker` (by id), in (created_at, id) order,
    of one cluster or of a project (None: every project); and whether more follow. None when
    the marker names no node of that list. Keyset paging: a page costs the same at any depth."""
    q = select(nodes).where(nodes.c.deleted_at.is_(None))
    if cluster_id is not None:
        q = q.where(nodes.c.cluster_id == cluster_id)
    if project_id is not None:
        q = q.where(nodes.c.project_id == project_id)
    if marker is not None:
        at = conn.execute(
            q.with_only_columns(nodes.c.created_at, nodes.c.id).where(nodes.c.id == marker)
        ).first()
        if at is None:
            return None
        q = q.where(tuple_(nodes.c.created_at, nodes.c.id) > tuple_(at[0], at[1]))
    rows = conn.execute(q.order_by(nodes.c.created_at, nodes.c.id).limit(limit + 1)).mappings()
    found = [NodeRecord.from_row(r) for r in rows]
    return found[:limit], len(found) > limit


def live_nodes_by_cluster(
    conn: Connection, cluster_ids: Collection[str] | None = None
) -> dict[str, list[NodeRecord]]:
    """Every cluster's live nodes in one query (the manager's tick: one read, not one per
    cluster), each list in `list_nodes`' order; only those of `cluster_ids` when given (an
    engine reads its partitions' nodes, not the installation's)."""
    q = (
        select(nodes)
        .where(nodes.c.deleted_at.is_(None), nodes.c.cluster_id.is_not(None))
        .order_by(nodes.c.created_at, nodes.c.name)
    )
    found: dict[str, list[NodeRecord]] = {}
    if cluster_ids is None:
        batches = [q]
    else:
        ids = sorted(cluster_ids)
        batches = [
            q.where(nodes.c.cluster_id.in_(ids[i : i + 500])) for i in range(0, len(ids), 500)
        ]
    for b in batches:
        for r in conn.execute(b).mappings():
            found.setdefault(str(r["cluster_id"]), []).append(NodeRecord.from_row(r))
    return found


class NodeCache:
    """Live nodes already read, by id: the row's version as last seen and the record built
    from it. Owned by one reader (the manager); the records and profiles it hands out are
    shared from one read to the next and must be treated as read-only.

    The version is the row's `xmin` on PostgreSQL (the transaction that wrote this version of
    it: any write makes a new one), the whole row (the profile's JSON as text) on SQLite."""

    __slots__ = ("reads", "rows")

    def __init__(self) -> None:
        self.rows: dict[str, tuple[object, NodeRecord]] = {}
        self.reads = 0


FULL_READ_EVERY = 300
"""Every this many reads, every row is read and decoded again (at the manager's tick, every
five minutes): insurance, not needed for correctness (a transaction id comes back only after
four billion transactions)."""

_NODE_NAMES = [c.name for c in nodes.c]
_PROFILE = _NODE_NAMES.index("profile")
_CLUSTER = _NODE_NAMES.index("cluster_id")
_KIND = _NODE_NAMES.index("kind")
_STATUS = _NODE_NAMES.index("status")
_NODE_HEAD = select(*(cast(c, Text) if c.name == "profile" else c for c in nodes.c))
_XMIN: ColumnClause[str] = literal_column("nodes.xmin::text")
_LIVE = (nodes.c.deleted_at.is_(None), nodes.c.cluster_id.is_not(None))
_ORDER = (nodes.c.created_at, nodes.c.name)
_CHUNK = 500


def live_nodes_by_cluster_cached(
    conn: Connection, cluster_ids: Collection[str], cache: NodeCache
) -> dict[str, list[NodeRecord]]:
    """`live_nodes_by_cluster(conn, cluster_ids)`, reading and decoding only what changed since
    the cache's last read (issue 23: the manager's tick read a settled 100,000-node cluster
    every second, nearly a core, most of it decoding rows into records).

    On PostgreSQL the live nodes are listed with their versions (id and `xmin`, in list order)
    and only the rows of new versions are read whole, in another statement: a row changed or
    deleted in between is taken as read there (newer), or left out. On SQLite every row is read
    and one equal to the last seen gives the same record again. The cache keeps only the nodes
    of this read."""
    cache.reads += 1
    known = {} if cache.reads % FULL_READ_EVERY == 0 else cache.rows
    ids = sorted(cluster_ids)
    if conn.dialect.name == "postgresql":
        listed = _versions(conn, ids, known)
    else:
        listed = _compared(conn, ids, known)
    found: dict[str, list[NodeRecord]] = {}
    for node in listed:
        got = found.get(node.cluster_id or "")
        if got is None:
            found[node.cluster_id or ""] = [node]
        else:
            got.append(node)
    cache.rows = known
    return found


def _versions(
    conn: Connection, ids: list[str], known: dict[str, tuple[object, NodeRecord]]
) -> list[NodeRecord]:
    """The live nodes of clusters `ids` in list order; `known` left holding exactly them."""
    listed: list[tuple[str, object]] = []
    for i in range(0, len(ids), _CHUNK):
        q = (
            select(nodes.c.id, _XMIN)
            .where(*_LIVE, nodes.c.cluster_id.in_(ids[i : i + _CHUNK]))
            .order_by(*_ORDER)
        )
        listed.extend((r[0], r[1]) for r in conn.execute(q))
    stale = [nid for nid, v in listed if nid not in known or known[nid][0] != v]
    for i in range(0, len(stale), _CHUNK):
        q = _NODE_HEAD.add_columns(_XMIN).where(*_LIVE, nodes.c.id.in_(stale[i : i + _CHUNK]))
        for r in conn.execute(q).all():
            row = tuple(r)
            known[row[0]] = (row[-1], _record(row[:-1]))
    out: list[NodeRecord] = []
    for nid, _ in listed:
        seen = known.get(nid)
        if seen is not None:  # else deleted since it was listed
            out.append(seen[1])
    if len(known) > len(out):
        here = {n.id for n in out}
        for gone in [k for k in known if k not in here]:
            del known[gone]
    return out


def _compared(
    conn: Connection, ids: list[str], known: dict[str, tuple[object, NodeRecord]]
) -> list[NodeRecord]:
    """As `_versions`, by comparing whole rows."""
    out: list[NodeRecord] = []
    kept: dict[str, tuple[object, NodeRecord]] = {}
    for i in range(0, len(ids), _CHUNK):
        q = _NODE_HEAD.where(*_LIVE, nodes.c.cluster_id.in_(ids[i : i + _CHUNK])).order_by(*_ORDER)
        # All at once: one fetch, not a driver call per row.
        for r in conn.execute(q).all():
            row = tuple(r)
            seen = known.get(row[0])
            if seen is None or seen[0] != row:
                seen = (row, _record(row))
            kept[row[0]] = seen
            out.append(seen[1])
    known.clear()
    known.update(kept)
    return out


def _record(row: tuple[Any, ...]) -> NodeRecord:
    """The record of a row read by `_NODE_HEAD` (as `NodeRecord.from_row` builds it)."""
    values = dict(zip(_NODE_NAMES, row, strict=True))
    values["kind"] = NodeKind(row[_KIND])
    values["status"] = NodeStatus(row[_STATUS])
    values["profile"] = dict(json.loads(row[_PROFILE]))
    return NodeRecord(**values)


def list_project_nodes(conn: Connection, project_id: str | None) -> list[NodeRecord]:
    q = select(nodes).where(nodes.c.deleted_at.is_(None)).order_by(nodes.c.created_at)
    if project_id is not None:
        q = q.where(nodes.c.project_id == project_id)
    return [NodeRecord.from_row(r) for r in conn.execute(q).mappings()]


def named_on_host(conn: Connection, host: str) -> dict[str, str]:
    """Provider id -> `cluster/node` (a standalone node: its name) of the live nodes on
    `host`: what `host fail` names, read before the host goes (issue 36: read after, a node
    already replaced elsewhere had a new provider id, and the answer showed the old one)."""
    q = (
        select(nodes.c.provider_id, clusters.c.name, nodes.c.name)
        .select_from(nodes.outerjoin(clusters, clusters.c.id == nodes.c.cluster_id))
        .where(nodes.c.host == host, nodes.c.deleted_at.is_(None), nodes.c.provider_id.is_not(None))
    )
    return {
        str(pid): f"{cluster}/{name}" if cluster else str(name)
        for pid, cluster, name in conn.execute(q)
    }


def get_node(conn: Connection, ref: str, project_id: str | None = None) -> NodeRecord | None:
    q = select(nodes).where(nodes.c.id == ref)
    if project_id is not None:
        q = q.where(nodes.c.project_id == project_id)
    row = conn.execute(q).mappings().first()
    return None if row is None else NodeRecord.from_row(row)


def get_nodes(conn: Connection, ids: Iterable[str]) -> dict[str, NodeRecord]:
    ids = list(ids)
    out: dict[str, NodeRecord] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for r in conn.execute(select(nodes).where(nodes.c.id.in_(chunk))).mappings():
            out[r["id"]] = NodeRecord.from_row(r)
    return out


def update_nodes(conn: Connection, changes: Sequence[NodeChange]) -> None:
    """Each change sets its columns on its node; changes that set the same columns run as
    one batch (`bulk.update_rows`: one statement for a flush's thousands of nodes)."""
    # A change's values read at once, which of them are set found by `map` (issue 23: a dict
    # of the columns and another with the id, per node, were a fifth of a flush's write).
    by_set: dict[tuple[bool, ...], list[tuple[object, ...]]] = {}
    for c in changes:
        values = _change_values(c)
        which = tuple(map(is_not, values, _UNSETS))
        rows = by_set.get(which)
        if rows is None:
            rows = by_set[which] = []
        rows.append((c.node_id, *compress(values, which)))
    for which, rows in by_set.items():
        names = list(compress(CHANGE_COLUMNS, which))
        if names:
            update_rows(conn, nodes, "id", names, rows)


_change_values = attrgetter(*CHANGE_COLUMNS)
_UNSETS = (UNSET,) * len(CHANGE_COLUMNS)


def used_capacity(conn: Connection, exclude_cluster: str | None = None) -> dict[str, Demand]:
    """Capacity held on each host by live nodes and by the reservations of accepted, unplanned
    actions (optionally leaving one cluster out)."""
    q = (
        select(
            nodes.c.host,
            func.sum(nodes.c.vcpus),
            func.sum(nodes.c.ram_mb),
            func.sum(nodes.c.disk_gb),
            func.sum(nodes.c.volume_gb),
        )
        .where(nodes.c.deleted_at.is_(None), nodes.c.host.is_not(None))
        .group_by(nodes.c.host)
    )
    if exclude_cluster is not None:
        # A node without a cluster (a Senlin standalone node) still holds its capacity.
        q = q.where(or_(nodes.c.cluster_id.is_(None), nodes.c.cluster_id != exclude_cluster))
    used = {
        row[0]: Demand(int(row[1] or 0), int(row[2] or 0), int(row[3] or 0), int(row[4] or 0))
        for row in conn.execute(q)
    }
    # Accepted actions not planned yet hold what admission promised them.
    for host, demand in reserved_by_host(conn, exclude_cluster).items():
        used[host] = used.get(host, Demand()) + demand
    return used

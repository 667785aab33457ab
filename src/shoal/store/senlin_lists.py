"""Senlin's lists (clusters, nodes, actions, events, policies, profiles, receivers), filtered,
sorted and paged in SQL.

Senlin's filters and sort keys name fields of its views; each is an expression over the rows
here (an action's Senlin name is the one its inputs carry, else its kind), so a page is one
query: `WHERE` for the filters, `ORDER BY` the sort keys then the id, and the marker found by
its position in that order (`row_number()`), which works for any sort key, NULLs included.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    RowMapping,
    Select,
    String,
    Table,
    and_,
    case,
    cast,
    func,
    literal,
    not_,
    select,
)

from shoal.store.receivers import ReceiverRecord
from shoal.store.records import ActionRecord, ClusterRecord, EventRecord, NodeRecord
from shoal.store.senlin_policies import PolicyRecord, record_of
from shoal.store.tables import (
    actions,
    clusters,
    events,
    nodes,
    profiles,
    receivers,
    senlin_policies,
    senlin_receivers,
)

T = TypeVar("T")

SENLIN_ACTION = "senlin_action"
"""The input key naming the Senlin action a Shoal action stands for."""

LEVELS = {"DEBUG": "10", "INFO": "20", "WARNING": "30", "ERROR": "40", "CRITICAL": "50"}
"""Event levels as Senlin shows them (numbers as text)."""


class MarkerNotFound(LookupError):
    """The page's marker names no row of the list."""


@dataclass(frozen=True, slots=True)
class ListQuery:
    project_id: str | None
    """None: every project (an admin's `global_project`)."""
    cluster_id: str | None = None
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """View field -> the values it may have (any of them)."""
    sort: Sequence[tuple[str, bool]] = ()
    """(view field, descending), in order; the id breaks ties."""
    marker: str | None = None
    limit: int | None = None


def parse_sort(text: str) -> tuple[tuple[str, bool], ...]:
    """Senlin's `sort` ("key:dir,key2", checked by the façade) as (key, descending) pairs."""
    out = []
    for part in text.split(","):
        key, _, direction = part.strip().partition(":")
        if key:
            out.append((key, direction == "desc"))
    return tuple(out)


def _action_name() -> ColumnElement[Any]:
    senlin = actions.c.inputs[SENLIN_ACTION].as_string()
    return func.coalesce(senlin, actions.c.kind)


def _action_fields() -> dict[str, ColumnElement[Any]]:
    name = _action_name()
    return {
        "name": func.lower(name) + literal("_") + func.substr(actions.c.id, 1, 8),
        "action": name,
        "target": func.coalesce(actions.c.node_id, actions.c.cluster_id),
        "cluster_id": actions.c.cluster_id,
        "status": actions.c.status,
        "created_at": actions.c.created_at,
        "id": actions.c.id,
    }


def _event_fields() -> dict[str, ColumnElement[Any]]:
    name = select(_action_name()).where(actions.c.id == events.c.action_id).scalar_subquery()
    level = case(
        *[(func.upper(events.c.level) == k, literal(v)) for k, v in LEVELS.items()],
        else_=events.c.level,
    )
    return {
        "oid": case(
            (events.c.obj_type == "NODE", events.c.node_id),
            (events.c.obj_type == "ACTION", events.c.action_id),
            else_=events.c.cluster_id,
        ),
        "oname": events.c.obj_name,
        "otype": events.c.obj_type,
        "cluster_id": events.c.cluster_id,
        "level": level,
        "action": func.coalesce(name, literal("")),
        "status": events.c.status,
        "timestamp": events.c.ts,
        "id": cast(events.c.id, String),
    }


def _paged(
    conn: Connection,
    q: Select[Any],
    fields: Mapping[str, ColumnElement[Any]],
    query: ListQuery,
    tie: ColumnElement[Any],
) -> list[str]:
    """The ids of one page of `q` (which selects the row id as `key`)."""
    for name, wanted in query.filters.items():
        q = q.where(fields[name].in_(wanted))
    order = []
    for key, descending in query.sort:
        expr = fields[key]
        order.append(expr.desc().nulls_first() if descending else expr.asc().nulls_last())
    ranked = q.add_columns(func.row_number().over(order_by=[*order, tie]).label("rn")).subquery()
    page = select(ranked.c.key).order_by(ranked.c.rn)
    if query.marker is not None:
        at = conn.execute(select(ranked.c.rn).where(ranked.c.key == query.marker)).scalar()
        if at is None:
            raise MarkerNotFound(query.marker)
        page = page.where(ranked.c.rn > at)
    if query.limit is not None:
        page = page.limit(query.limit)
    return [str(k) for k in conn.execute(page).scalars()]


def _in_page_order(
    conn: Connection, table: Table, ids: list[str], of_row: Callable[[RowMapping], T]
) -> list[T]:
    """The rows of one page (`_paged`'s ids), in the page's order; a row gone meanwhile is
    left out."""
    if not ids:
        return []
    rows = conn.execute(select(table).where(table.c.id.in_(ids))).mappings()
    by_id = {row["id"]: of_row(row) for row in rows}
    return [by_id[i] for i in ids if i in by_id]


def list_actions(conn: Connection, query: ListQuery) -> list[ActionRecord]:
    """Senlin's action list: every action but ordering steps Senlin has no word for."""
    internal = and_(
        actions.c.kind == "BARRIER", actions.c.inputs[SENLIN_ACTION].as_string().is_(None)
    )
    q: Select[Any] = select(actions.c.id.label("key")).where(not_(internal))
    if query.project_id is not None:
        q = q.where(actions.c.project_id == query.project_id)
    if query.cluster_id is not None:
        q = q.where(actions.c.cluster_id == query.cluster_id)
    ids = _paged(conn, q, _action_fields(), query, actions.c.id)
    return _in_page_order(conn, actions, ids, ActionRecord.from_row)


def list_events(conn: Connection, query: ListQuery) -> list[EventRecord]:
    q: Select[Any] = select(cast(events.c.id, String).label("key"))
    if query.project_id is not None:
        q = q.where(events.c.project_id == query.project_id)
    if query.cluster_id is not None:
        q = q.where(events.c.cluster_id == query.cluster_id)
    ids = _paged(conn, q, _event_fields(), query, events.c.id)
    if not ids:
        return []
    rows = conn.execute(select(events).where(events.c.id.in_([int(i) for i in ids]))).mappings()
    by_id = {str(r["id"]): EventRecord.from_row(r) for r in rows}
    return [by_id[i] for i in ids if i in by_id]


def list_policies(conn: Connection, query: ListQuery) -> list[PolicyRecord]:
    t = senlin_policies
    fields: dict[str, ColumnElement[Any]] = {
        "name": t.c.name,
        "type": t.c.type,
        "created_at": t.c.created_at,
        "updated_at": t.c.updated_at,
        "id": t.c.id,
    }
    q: Select[Any] = select(t.c.id.label("key"))
    if query.project_id is not None:
        q = q.where(t.c.project_id == query.project_id)
    ids = _paged(conn, q, fields, query, t.c.id)
    if not ids:
        return []
    by_id = {r.id: record_of(r) for r in conn.execute(select(t).where(t.c.id.in_(ids)))}
    return [by_id[i] for i in ids if i in by_id]


def list_nodes(conn: Connection, query: ListQuery) -> list[NodeRecord]:
    """Live nodes of a cluster (`cluster_id`) or of the scope, as Senlin lists them."""
    fields: dict[str, ColumnElement[Any]] = {
        "name": nodes.c.name,
        "status": nodes.c.status,
        "index": case((nodes.c.replica > 0, nodes.c.replica), else_=literal(-1)),
        "init_at": nodes.c.created_at,
        "created_at": nodes.c.created_at,
        "updated_at": nodes.c.updated_at,
        "id": nodes.c.id,
    }
    q: Select[Any] = select(nodes.c.id.label("key")).where(nodes.c.deleted_at.is_(None))
    if query.project_id is not None:
        q = q.where(nodes.c.project_id == query.project_id)
    if query.cluster_id is not None:
        q = q.where(nodes.c.cluster_id == query.cluster_id)
    ids = _paged(conn, q, fields, query, nodes.c.id)
    return _in_page_order(conn, nodes, ids, NodeRecord.from_row)


@dataclass(frozen=True, slots=True)
class ProfileNaming:
    """How the façade shows a stored profile's type and name. Passed in, as the store does not
    know Senlin's type names: a profile created through the façade keeps its Senlin type in
    `type` and its Senlin name, spec and `updated_at` in an envelope under `spec[envelope]`; a
    native profile is shown by its native kind."""

    envelope: str
    senlin_types: Collection[str]
    """`type` values that are Senlin type names (the façade's own profiles)."""
    native_types: Mapping[str, str]
    """A native profile's kind (its spec's `type`) -> the Senlin type name it is shown as."""
    native_default: str


def list_profiles(
    conn: Connection, query: ListQuery, naming: ProfileNaming
) -> list[dict[str, Any]]:
    """Profiles (rows of `profiles`) as Senlin lists them: by their Senlin name and type."""
    p = profiles
    senlin = p.c.type.in_(list(naming.senlin_types))
    kind = p.c.spec["type"].as_string()
    fields: dict[str, ColumnElement[Any]] = {
        "name": func.coalesce(p.c.spec[(naming.envelope, "name")].as_string(), p.c.name),
        "type": case(
            (senlin, p.c.type),
            *[(kind == k, literal(v)) for k, v in naming.native_types.items()],
            else_=literal(naming.native_default),
        ),
        "created_at": p.c.created_at,
        "updated_at": case((senlin, p.c.spec[(naming.envelope, "updated_at")].as_float())),
        "id": p.c.id,
    }
    q: Select[Any] = select(p.c.id.label("key"))
    if query.project_id is not None:
        q = q.where(p.c.project_id == query.project_id)
    ids = _paged(conn, q, fields, query, p.c.id)
    return _in_page_order(conn, p, ids, dict)


RECEIVER_ACTIONS = {
    "scale_out": "CLUSTER_SCALE_OUT",
    "scale_in": "CLUSTER_SCALE_IN",
    "recover": "CLUSTER_RECOVER",
}
"""Shoal's receiver actions by the Senlin action each stands for."""


def list_receivers(conn: Connection, query: ListQuery) -> list[ReceiverRecord]:
    """Receivers as Senlin lists them: by the name and action the façade keeps for them."""
    r, sr = receivers, senlin_receivers
    native_action = case(
        *[(r.c.action == k, literal(v)) for k, v in RECEIVER_ACTIONS.items()],
        else_=func.upper(r.c.action),
    )
    fields: dict[str, ColumnElement[Any]] = {
        "name": func.coalesce(sr.c.name, r.c.name),
        "type": literal("webhook"),
        "cluster_id": r.c.cluster_id,
        "action": func.coalesce(sr.c.action, native_action),
        "created_at": r.c.created_at,
        "user": literal("None"),
        "id": r.c.id,
    }
    joined = r.outerjoin(sr, sr.c.receiver_id == r.c.id)
    q: Select[Any] = select(r.c.id.label("key")).select_from(joined)
    if query.project_id is not None:
        q = q.where(r.c.project_id == query.project_id)
    ids = _paged(conn, q, fields, query, r.c.id)
    return _in_page_order(conn, r, ids, ReceiverRecord.from_row)


def list_clusters(conn: Connection, query: ListQuery, name_key: str) -> list[ClusterRecord]:
    """Live clusters as Senlin lists them: by the name Senlin clients gave (kept in the
    document's metadata under `name_key` when Shoal's own name had to differ)."""
    c = clusters
    given = c.c.document[("metadata", name_key)].as_string()
    fields: dict[str, ColumnElement[Any]] = {
        "name": func.coalesce(given, c.c.name),
        "status": c.c.status,
        "init_at": c.c.created_at,
        "created_at": c.c.created_at,
        "updated_at": c.c.updated_at,
        "id": c.c.id,
    }
    q: Select[Any] = select(c.c.id.label("key")).where(c.c.deleted_at.is_(None))
    if query.project_id is not None:
        q = q.where(c.c.project_id == query.project_id)
    ids = _paged(conn, q, fields, query, c.c.id)
    return _in_page_order(conn, c, ids, ClusterRecord.from_row)

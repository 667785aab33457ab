"""Action rows: creation with dependencies, claims with leases, completion, cancellation.

Claims are compare-and-set updates, so two engines never run one action at once: on PostgreSQL
the candidates are picked `FOR UPDATE SKIP LOCKED`; on SQLite the write lock taken by
`BEGIN IMMEDIATE` serialises claimers. A claim lasts until `lease_expires_at`; the owner extends
it by heartbeat, and a RUNNING action whose lease ran out is claimable again (its engine died).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Float,
    Integer,
    Row,
    Select,
    String,
    Text,
    Update,
    and_,
    bindparam,
    func,
    or_,
    select,
    update,
)

from shoal.model.enums import ActionKind, ActionStatus
from shoal.store.bulk import bulk_update, in_keys, insert_columns, key_chunk
from shoal.store.pages import page_rows
from shoal.store.records import ActionRecord, ActionRecordTwin, action_record
from shoal.store.tables import action_deps, actions
from shoal.store.wakeups import notify_work
from shoal.telemetry import requestid

NODE_KINDS = [k.value for k in ActionKind if k.is_node_level]
# Kinds with a loop of their own (issue 11's deployer): neither the node nor the cluster loop
# claims them; `claim(kinds=...)` does.
SEPARATE_KINDS = [ActionKind.NODE_DEPLOY.value]


@dataclass(slots=True)
class NewAction:
    id: str
    project_id: str
    kind: str
    cluster_id: str | None = None
    node_id: str | None = None
    parent_id: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    depends_on: list[str] = field(default_factory=list)
    status: ActionStatus | None = None
    """Default: READY without dependencies, INIT with them."""
    request_id: str | None = None
    """Default: the request being served (shoal.telemetry.requestid), if any."""


def insert_actions(conn: Connection, new: list[NewAction], now: float) -> None:
    if not new:
        return
    # Column by column (issue 23: a dict per row, then psycopg's formatting of each, was
    # some 20 us an action of a 100,000-node plan).
    count = len(new)
    request_id = requestid.get()
    statuses = [
        a.status or (ActionStatus.INIT if a.depends_on else ActionStatus.READY) for a in new
    ]
    columns: dict[str, Sequence[object]] = {
        f: list(map(attrgetter(f), new))
        for f in ("id", "project_id", "cluster_id", "node_id", "parent_id", "kind")
    }
    columns.update(
        status=statuses,
        status_reason=[""] * count,
        inputs=list(map(attrgetter("inputs"), new)),
        outputs=[{}] * count,
        owner=[None] * count,
        lease_expires_at=[None] * count,
        attempts=[0] * count,
        deps_pending=[len(set(a.depends_on)) if a.depends_on else 0 for a in new],
        cancel_requested=[False] * count,
        created_at=[now] * count,
        started_at=[None] * count,
        ended_at=[None] * count,
        request_id=[a.request_id or request_id for a in new],
    )
    insert_columns(conn, actions, columns, count)
    deps = [(a.id, d) for a in new if a.depends_on for d in set(a.depends_on)]
    if deps:
        ids, on = zip(*deps, strict=True)
        insert_columns(conn, action_deps, {"action_id": ids, "depends_on": on}, len(deps))
    if ActionStatus.READY in statuses:
        notify_work(conn)


def get_action(
    conn: Connection, action_id: str, project_id: str | None = None
) -> ActionRecord | None:
    q = select(actions).where(actions.c.id == action_id)
    if project_id is not None:
        q = q.where(actions.c.project_id == project_id)
    row = conn.execute(q).mappings().first()
    return None if row is None else ActionRecord.from_row(row)


def list_actions(
    conn: Connection,
    project_id: str | None,
    *,
    cluster_id: str | None = None,
    parent_id: str | None = None,
    top_level: bool = False,
    limit: int = 1000,
) -> list[ActionRecord]:
    got = page_actions(
        conn,
        project_id,
        cluster_id=cluster_id,
        parent_id=parent_id,
        top_level=top_level,
        limit=limit,
        marker=None,
    )
    assert got is not None  # no marker: always a page
    return got[0]


def page_actions(
    conn: Connection,
    project_id: str | None,
    *,
    cluster_id: str | None = None,
    parent_id: str | None = None,
    top_level: bool = False,
    limit: int,
    marker: str | None,
) -> tuple[list[ActionRecord], bool] | None:
    """A page of actions after the action `marker` (by id), oldest first, and whether more
    follow; None when the marker names no action of this list."""
    q = select(actions)
    if project_id is not None:
        q = q.where(actions.c.project_id == project_id)
    if cluster_id is not None:
        q = q.where(actions.c.cluster_id == cluster_id)
    if parent_id is not None:
        q = q.where(actions.c.parent_id == parent_id)
    if top_level:
        # A software deployment's run has no parent but is no request: only with everything.
        q = q.where(actions.c.parent_id.is_(None), actions.c.kind.not_in(SEPARATE_KINDS))
    got = page_rows(conn, actions, q, limit, marker)
    if got is None:
        return None
    rows, more = got
    return [ActionRecord.from_row(r) for r in rows], more


def claim(
    conn: Connection,
    *,
    owner: str,
    now: float,
    lease_s: float,
    limit: int,
    node_level: bool,
    skip_locked: bool,
    kinds: list[str] | None = None,
) -> list[ActionRecord]:
    """Claim up to `limit` runnable actions: READY ones, and RUNNING ones whose lease expired."""
    key = (tuple(kinds) if kinds is not None else node_level, skip_locked, conn.dialect.name)
    statements = _CLAIMS.get(key)
    if statements is None:
        statements = _CLAIMS[key] = _claim_statements(
            kinds, node_level, skip_locked, conn.dialect.name == "postgresql"
        )
    take_expired, take_ready = statements
    params = {"owner": owner, "now": now, "until": now + lease_s, "n": limit}
    # A dead owner's work first (few rows: at most what the engines ran): by creation alone it
    # waited behind every older READY action, 117 s with a 10 s lease at 100,000 nodes.
    claimed = [_claimed(r) for r in conn.execute(take_expired, params).all()]
    if len(claimed) < limit:
        params["n"] = limit - len(claimed)
        claimed += [_claimed(r) for r in conn.execute(take_ready, params).all()]
    return claimed


_CLAIMS: dict[tuple[object, ...], tuple[Update, Update]] = {}
"""`claim`'s two statements by what they claim, built once (issue 23: building them anew,
and the separate read of the expired ones' ids sent back as an array, were a third of a
claim's CPU); their values are bound parameters."""


def _claim_statements(
    kinds: list[str] | None, node_level: bool, skip_locked: bool, postgresql: bool
) -> tuple[Update, Update]:
    """(expired, ready): each picks its rows and claims them in one statement. Picked in a
    materialized CTE: as an `IN (subquery)` PostgreSQL may run the locking pick again for each
    row, claiming past the limit (issue 23: the READY ones' ids, read back and sent again as an
    array of thousands, were a tenth of a claim's CPU)."""
    if kinds is not None:
        kind_filter = actions.c.kind.in_(kinds)
    elif node_level:
        kind_filter = actions.c.kind.in_(NODE_KINDS)
    else:
        kind_filter = actions.c.kind.not_in(NODE_KINDS + SEPARATE_KINDS)
    now = bindparam("now", type_=Float)
    expired = and_(actions.c.status == ActionStatus.RUNNING, actions.c.lease_expires_at < now)
    runnable = or_(actions.c.status == ActionStatus.READY, expired)

    def take(which: ColumnElement[bool], name: str) -> Update:
        q = (
            select(actions.c.id)
            .where(kind_filter, which)
            .order_by(actions.c.created_at)
            .limit(bindparam("n", type_=Integer))
        )
        if skip_locked:
            q = q.with_for_update(skip_locked=True)
        picked = q.cte(name)
        if postgresql:
            picked = picked.prefix_with("MATERIALIZED")
        return (
            update(actions)
            .where(actions.c.id.in_(select(picked.c.id)), runnable)
            .values(
                status=ActionStatus.RUNNING,
                owner=bindparam("owner", type_=String),
                lease_expires_at=bindparam("until", type_=Float),
                attempts=actions.c.attempts + 1,
                started_at=func.coalesce(actions.c.started_at, now),
            )
            .returning(*_CLAIMED)
        )

    return take(expired, "expired"), take(actions.c.status == ActionStatus.READY, "picked")


_CLAIMED = [
    actions.c[f.name].cast(Text) if f.name in ("inputs", "outputs") else actions.c[f.name]
    for f in fields(ActionRecord)
]
"""What a claim returns: every column of an `ActionRecord`, in its order, the JSON ones as their
text (issue 23: the driver's JSON loader decoded bytes, detecting their encoding each time, for
every claimed row's inputs and outputs; the outputs of a claim are most often `{}`)."""


_KINDS = {k.value: k for k in ActionKind}
_STATUSES = {s.value: s for s in ActionStatus}
"""The enums by value: a lookup, where calling the enum costs 0.8 us a column a row."""


def _claimed(row: Row[Any]) -> ActionRecord:
    v: tuple[Any, ...] = tuple(row)
    return action_record(
        ActionRecordTwin(
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            _KINDS.get(v[5]) or ActionKind(v[5]),
            _STATUSES.get(v[6]) or ActionStatus(v[6]),
            v[7],
            _json_object(v[8]),
            _json_object(v[9]),
            v[10],
            v[11],
            v[12],
            v[13],
            bool(v[14]),
            v[15],
            v[16],
            v[17],
            v[18],
        )
    )


_scan_json: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]
"""The C scanner `json.loads` ends in, called directly (issue 23: `loads` added a decoder
call and two whitespace matches, 1.2 us of its 6 us, to every claimed row's inputs)."""


def _json_object(text: str) -> dict[str, Any]:
    if text == "{}":
        return {}
    if text[:1] == "{":
        value, end = _scan_json(text, 0)
        if end == len(text) and type(value) is dict:
            return value
    return dict(json.loads(text))


def claimable(conn: Connection, kinds: list[str], now: float) -> bool:
    """Whether `claim(kinds=kinds)` would find anything: a read, so a loop that polls does not
    take the write lock (SQLite's is the whole database) when there is nothing to claim."""
    key = tuple(kinds)
    q = _CLAIMABLE.get(key)
    if q is None:
        at = bindparam("now", type_=Float)
        runnable = or_(
            actions.c.status == ActionStatus.READY,
            and_(actions.c.status == ActionStatus.RUNNING, actions.c.lease_expires_at < at),
        )
        q = _CLAIMABLE[key] = (
            select(actions.c.id).where(actions.c.kind.in_(kinds), runnable).limit(1)
        )
    return conn.execute(q, {"now": now}).first() is not None


_CLAIMABLE: dict[tuple[str, ...], Select[tuple[str]]] = {}
"""`claimable`'s statement by kinds, built once (issue 23: the deployer asks after every node
flush, and building it was a sixth of its asking)."""


NODE_WORK_COUNT_LIMIT = 200_000
"""Counting stops here: a share of more than this is the same decision."""


def _node_work_query(kinds: list[str]) -> Select[int, int]:
    now = bindparam("now", type_=Float)
    runnable = or_(
        actions.c.status == ActionStatus.READY,
        and_(actions.c.status == ActionStatus.RUNNING, actions.c.lease_expires_at < now),
    )
    running = and_(actions.c.status == ActionStatus.RUNNING, actions.c.lease_expires_at >= now)
    counts = [
        select(func.count())
        .select_from(
            select(actions.c.id)
            .where(actions.c.kind.in_(kinds), cond)
            .limit(NODE_WORK_COUNT_LIMIT)
            .subquery()
        )
        .scalar_subquery()
        for cond in (runnable, running)
    ]
    return select(counts[0], counts[1])


_NODE_WORK = _node_work_query(NODE_KINDS)
"""Built once, both counts in one statement (issue 23: building the two statements anew
for each count was most of its CPU, as much as the reading itself)."""


def node_work(conn: Connection, now: float, kinds: list[str] | None = None) -> tuple[int, int]:
    """(runnable, running) node-level actions (of `kinds`, default every node-level kind the
    node loop claims), each counted up to NODE_WORK_COUNT_LIMIT."""
    q = _NODE_WORK if kinds is None else _node_work_query(kinds)
    runnable, running = conn.execute(q, {"now": now}).one()
    return int(runnable), int(running)


def heartbeat(conn: Connection, owner: str, now: float, lease_s: float) -> int:
    res = conn.execute(
        update(actions)
        .where(actions.c.owner == owner, actions.c.status == ActionStatus.RUNNING)
        .values(lease_expires_at=now + lease_s)
    )
    return int(res.rowcount)


@dataclass(frozen=True, slots=True)
class Completion:
    action_id: str
    status: ActionStatus
    reason: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)


def complete(conn: Connection, done: list[Completion], owner: str, now: float) -> list[str]:
    """Finish actions this owner still holds; returns the ids actually finished."""
    if not done:
        return []
    if conn.dialect.name == "postgresql":
        return _complete_pg(conn, done, owner, now)
    held: set[str] = set()
    ids = [d.action_id for d in done]
    chunk = key_chunk(conn, 500)
    for start in range(0, len(ids), chunk):
        held.update(
            r[0]
            for r in conn.execute(
                select(actions.c.id).where(
                    in_keys(conn, actions.c.id, ids[start : start + chunk]),
                    actions.c.owner == owner,
                    actions.c.status == ActionStatus.RUNNING,
                )
            )
        )
    rows: list[dict[str, object]] = [
        {"id": d.action_id, "status": d.status, "status_reason": d.reason, "outputs": d.outputs}
        for d in done
        if d.action_id in held
    ]
    # One statement for a flush of thousands (store/bulk.py), not one bound row each.
    bulk_update(conn, actions, "id", rows, {"ended_at": now, "lease_expires_at": None})
    succeeded = [
        d.action_id for d in done if d.action_id in held and d.status is ActionStatus.SUCCEEDED
    ]
    release_dependents(conn, succeeded)
    return [str(r["id"]) for r in rows]


_COMPLETE_PG = (
    "UPDATE actions AS t SET status = u.status, status_reason = u.status_reason,"
    " outputs = u.outputs, ended_at = %(now)s, lease_expires_at = NULL"
    " FROM (SELECT (e->>0)::VARCHAR(36) AS id, (e->>1)::VARCHAR(16) AS status,"
    " (e->>2)::TEXT AS status_reason, (e->3)::JSON AS outputs"
    " FROM json_array_elements(%(rows)s::json) AS e) AS u"
    " WHERE t.id = u.id AND t.owner = %(owner)s AND t.status = 'RUNNING'"
    " RETURNING t.id, t.status = 'SUCCEEDED'"
    " AND EXISTS (SELECT 1 FROM action_deps AS d WHERE d.depends_on = t.id)"
)
"""`complete` on PostgreSQL: the held check, the write and which ended actions others wait on,
in one statement (issue 23: a read of the held ids, an update by arrays that psycopg dumped
element by element in Python, and a read of the dependents of every success). Each completion
is a JSON array, read by position: as an object `json.dumps` wrote its keys again each row."""

_completion_values = attrgetter("action_id", "status", "reason", "outputs")


def _complete_pg(conn: Connection, done: list[Completion], owner: str, now: float) -> list[str]:
    document = json.dumps(list(map(_completion_values, done)), check_circular=False)
    ended: set[str] = set()
    waited_on: set[str] = set()
    for action_id, others_wait in conn.exec_driver_sql(
        _COMPLETE_PG, {"rows": document, "now": now, "owner": owner}
    ).all():
        ended.add(action_id)
        if others_wait:
            waited_on.add(action_id)
    if waited_on:
        # In the order of `done`, as elsewhere: the dependents' counts do not depend on it.
        release_dependents(conn, [d.action_id for d in done if d.action_id in waited_on])
    return [d.action_id for d in done if d.action_id in ended]


def release_dependents(conn: Connection, succeeded: list[str]) -> None:
    """Count down the dependencies of actions waiting on `succeeded`; make ready those at zero."""
    if not succeeded:
        return
    counts: Counter[str] = Counter()
    chunk = key_chunk(conn, 500)
    for start in range(0, len(succeeded), chunk):
        for r in conn.execute(
            select(action_deps.c.action_id).where(
                in_keys(conn, action_deps.c.depends_on, succeeded[start : start + chunk])
            )
        ):
            counts[r[0]] += 1
    if not counts:
        return
    conn.execute(
        update(actions)
        .where(actions.c.id == bindparam("d_id"))
        .values(deps_pending=actions.c.deps_pending - bindparam("d_n")),
        [{"d_id": k, "d_n": n} for k, n in counts.items()],
    )
    waiting = list(counts)
    for start in range(0, len(waiting), chunk):
        conn.execute(
            update(actions)
            .where(
                in_keys(conn, actions.c.id, waiting[start : start + chunk]),
                actions.c.status == ActionStatus.INIT,
                actions.c.deps_pending <= 0,
            )
            .values(status=ActionStatus.READY)
        )
    notify_work(conn)


def set_status(
    conn: Connection,
    action_id: str,
    status: ActionStatus,
    now: float,
    *,
    reason: str = "",
    outputs: dict[str, Any] | None = None,
    owner: str | None = None,
) -> bool:
    """Move one action to `status` (only while `owner` holds it, when given)."""
    values: dict[str, Any] = {"status": status, "status_reason": reason}
    if outputs is not None:
        values["outputs"] = outputs
    if status.is_terminal:
        # The owner stays on record: which engine ran an action is worth knowing afterwards.
        values.update(ended_at=now, lease_expires_at=None)
    q = update(actions).where(actions.c.id == action_id)
    if owner is not None:
        q = q.where(actions.c.owner == owner)
    return conn.execute(q.values(**values)).rowcount == 1


def request_cancel(conn: Connection, action_id: str) -> None:
    conn.execute(update(actions).where(actions.c.id == action_id).values(cancel_requested=True))


def parents_at(conn: Connection, ids: list[str]) -> dict[str, tuple[ActionRecord, int]]:
    """The cluster actions `ids` as they are now, each with how many of its children are READY
    or RUNNING, in two statements for them all (issue 37: a parents' pass read each one and asked
    each to finish, three statements apiece, over every action an engine held; with 1,500
    repairs at once after a host loss a pass took seconds)."""
    found: dict[str, tuple[ActionRecord, int]] = {}
    # Ready or running only: children still INIT may wait on a step that failed, which only
    # `finish_action` cancels, so a parent with no other child left must be asked to finish.
    live = [ActionStatus.READY.value, ActionStatus.RUNNING.value]
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        pending = {
            str(p): int(n)
            for p, n in conn.execute(
                select(actions.c.parent_id, func.count())
                .where(actions.c.parent_id.in_(chunk), actions.c.status.in_(live))
                .group_by(actions.c.parent_id)
            )
        }
        for row in conn.execute(select(actions).where(actions.c.id.in_(chunk))).mappings():
            record = ActionRecord.from_row(row)
            found[record.id] = (record, pending.get(record.id, 0))
    return found


def child_counts(conn: Connection, parent_id: str) -> Counter[ActionStatus]:
    rows = conn.execute(
        select(actions.c.status, func.count())
        .where(actions.c.parent_id == parent_id)
        .group_by(actions.c.status)
    )
    return Counter({ActionStatus(r[0]): int(r[1]) for r in rows})


def failed_children(conn: Connection, parent_id: str, limit: int = 5) -> list[ActionRecord]:
    q = (
        select(actions)
        .where(actions.c.parent_id == parent_id, actions.c.status == ActionStatus.FAILED)
        .limit(limit)
    )
    return [ActionRecord.from_row(r) for r in conn.execute(q).mappings()]


def cancel_pending_children(conn: Connection, parent_id: str, now: float, reason: str) -> int:
    res = conn.execute(
        update(actions)
        .where(
            actions.c.parent_id == parent_id,
            actions.c.status.in_([ActionStatus.INIT, ActionStatus.READY]),
        )
        .values(status=ActionStatus.CANCELLED, status_reason=reason, ended_at=now)
    )
    return int(res.rowcount)


def live_actions_on(conn: Connection, cluster_ids: Iterable[str]) -> list[ActionRecord]:
    q = select(actions).where(
        actions.c.cluster_id.in_(list(cluster_ids)),
        actions.c.parent_id.is_(None),
        actions.c.status.not_in([s.value for s in ActionStatus if s.is_terminal]),
    )
    return [ActionRecord.from_row(r) for r in conn.execute(q).mappings()]


def live_inputs(conn: Connection, cluster_id: str, kind: ActionKind) -> list[tuple[str, Any]]:
    """(node id, raw inputs) of the cluster's actions of `kind` not yet ended."""
    live = [s.value for s in ActionStatus if not s.is_terminal]
    q = select(actions.c.node_id, actions.c.inputs).where(
        actions.c.cluster_id == cluster_id,
        actions.c.kind == kind.value,
        actions.c.status.in_(live),
    )
    return [(str(r[0]), r[1]) for r in conn.execute(q) if r[0]]


_NEXT_EXPIRY = select(
    *(
        select(actions.c.lease_expires_at)
        .where(
            actions.c.status == ActionStatus.RUNNING,
            actions.c.kind == kind.value,
            actions.c.lease_expires_at >= bindparam("now"),
            actions.c.owner != bindparam("owner"),
        )
        .order_by(actions.c.lease_expires_at)
        .limit(1)
        .scalar_subquery()
        for kind in ActionKind
    )
)
"""A first row per kind: each walks `ix_actions_runnable` (status, kind, lease) in lease order
and stops at the first row of another owner, so it stays cheap with 100,000 actions running (a
MIN over them all reads every one: 0.15 ms against 113 ms). Built once: it is an idle loop's."""


def next_lease_expiry(conn: Connection, owner: str, now: float) -> float | None:
    """When the first lease still running of another engine's action runs out (None: no
    other engine runs anything). An idle engine waits no longer than this (issue 23): nothing
    NOTIFYs when a dead engine's lease runs out, and its work is claimable from then on."""
    row = conn.execute(_NEXT_EXPIRY, {"now": now, "owner": owner}).one()
    found = [float(t) for t in row if t is not None]
    return min(found) if found else None

"""Deployment rows: what each software deployment last did on each node, and its secrets' keys.

One row per (node, deployment). Publishing a run overwrites the row (IN_PROGRESS, the run's
action id, digest and redacted inputs); finishing it writes the outcome only while the row still
belongs to that run, so a late signal from an earlier run changes nothing. `attempts` counts the
runs made with the current digest, which is what a deployment's retry limit is about.
"""

from __future__ import annotations

import secrets as pysecrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    bindparam,
    delete,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError

from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.rollouts import Revision, config_from_json, config_to_json
from shoal.model.software import (
    DeployAction,
    DeploymentRecord,
    DeploymentStatus,
    Json,
    SoftwareConfig,
)
from shoal.store.pages import page_rows
from shoal.store.tables import deployments, nodes, software_keys

TAIL_CHARS = 16_384
"""How much of a run's stdout and stderr is kept (the end, where the error usually is)."""


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    return text if len(text) <= limit else text[-limit:]


DEFAULT_ACTIONS = (DeployAction.CREATE, DeployAction.UPDATE)
"""Heat's default, and what a row written before 0019 is read as."""


def _actions(raw: object) -> tuple[DeployAction, ...]:
    if not isinstance(raw, list):
        return DEFAULT_ACTIONS
    return tuple(DeployAction(a) for a in raw if a in DeployAction.__members__)


@dataclass(frozen=True, slots=True)
class DeploymentRow:
    id: str
    project_id: str
    cluster_id: str
    node_id: str
    node_name: str
    name: str
    config: str
    hook: str
    action: DeployAction
    status: DeploymentStatus
    digest: str
    inputs: Mapping[str, Json]
    secret_inputs: tuple[str, ...]
    outputs: Mapping[str, Json]
    stdout: str
    stderr: str
    status_code: int | None
    attempts: int
    action_id: str | None
    signal_hash: str
    created_at: float
    started_at: float | None
    ended_at: float | None
    config_body: SoftwareConfig | None = None
    """The config as published to the node (None for rows published before 0008)."""
    previous: Revision | None = None
    """What the node completed before a newer revision was published to it (rollback)."""
    actions: tuple[DeployAction, ...] = DEFAULT_ACTIONS
    """The actions its deployment declared when it last ran (a retired one's DELETE)."""

    @classmethod
    def from_row(cls, row: RowMapping) -> DeploymentRow:
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            cluster_id=row["cluster_id"],
            node_id=row["node_id"],
            node_name=row["node_name"],
            name=row["name"],
            config=row["config"],
            hook=row["hook"],
            action=DeployAction(row["action"]),
            status=DeploymentStatus(row["status"]),
            digest=row["digest"],
            inputs=dict(row["inputs"] or {}),
            secret_inputs=tuple(row["secret_inputs"] or ()),
            outputs=dict(row["outputs"] or {}),
            stdout=row["stdout"],
            stderr=row["stderr"],
            status_code=row["status_code"],
            attempts=int(row["attempts"]),
            action_id=row["action_id"],
            signal_hash=row["signal_hash"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            ended_at=row["ended_at"],
            config_body=config_from_json(body) if (body := row.get("config_body")) else None,
            previous=Revision.from_json(prev) if (prev := row.get("previous")) else None,
            actions=_actions(row.get("actions")),
        )

    def record(self) -> DeploymentRecord:
        """The resolver's view of this row."""
        return DeploymentRecord(
            deployment=self.name,
            node=self.node_name,
            status=self.status,
            digest=self.digest,
            outputs=dict(self.outputs),
            attempts=self.attempts,
            action=self.action,
        )


@dataclass(frozen=True, slots=True)
class Publish:
    """One run of a deployment on a node, made visible to the node's agents."""

    id: str
    """The row's id when a new row is made (an existing row keeps its own)."""
    project_id: str
    cluster_id: str
    node_id: str
    node_name: str
    name: str
    config: str
    hook: str
    action: DeployAction
    digest: str
    inputs: Mapping[str, Json]
    secret_inputs: tuple[str, ...]
    action_id: str
    signal_hash: str
    config_body: SoftwareConfig | None = None
    rollback: bool = False
    """Re-publishing the node's previous revision: its `previous` stays as it is."""
    actions: tuple[DeployAction, ...] | None = None
    """The actions the deployment declares (None: keep what the row says)."""


@dataclass(frozen=True, slots=True)
class Finish:
    """How one run ended (from the agent's signal, the simulation, or a timeout)."""

    action_id: str
    status: DeploymentStatus
    status_code: int | None
    stdout: str = ""
    stderr: str = ""
    outputs: Mapping[str, Json] | None = None


def rows_for(
    conn: Connection, pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], DeploymentRow]:
    """The rows of these (node id, deployment) pairs."""
    out: dict[tuple[str, str], DeploymentRow] = {}
    nodes = sorted({p[0] for p in pairs})
    names = sorted({p[1] for p in pairs})
    wanted = set(pairs)
    for start in range(0, len(nodes), 500):
        # By (node, name) on their index: a claim of runs of one deployment does not read
        # every other deployment's rows of those nodes (issue 23: inside the claim's write
        # transaction, holding SQLite's lock, three times the rows at three deployments a node).
        q = select(deployments).where(
            deployments.c.node_id.in_(nodes[start : start + 500]),
            deployments.c.name.in_(names) if len(names) <= 50 else true(),
        )
        for r in conn.execute(q).mappings():
            row = DeploymentRow.from_row(r)
            if (row.node_id, row.name) in wanted:
                out[(row.node_id, row.name)] = row
    return out


def publish(
    conn: Connection,
    runs: Sequence[Publish],
    now: float,
    existing: Mapping[tuple[str, str], DeploymentRow] | None = None,
) -> None:
    """Mark each run IN_PROGRESS on its (node, deployment) row, making the row if needed.
    `existing`: the rows of these runs' pairs when the caller read them in this transaction
    (the deployer's claim does), so they are not read twice."""
    if not runs:
        return
    if existing is None:
        existing = rows_for(conn, [(p.node_id, p.name) for p in runs])
    fresh: list[dict[str, object]] = []
    changed: list[dict[str, object]] = []
    for p in runs:
        old = existing.get((p.node_id, p.name))
        attempts = old.attempts + 1 if old is not None and old.digest == p.digest else 1
        previous = old.previous if old is not None else None
        if (
            old is not None
            and not p.rollback
            and old.status is DeploymentStatus.COMPLETE
            and old.action is not DeployAction.DELETE
            and old.digest != p.digest
            and old.config_body is not None
        ):
            # A newer revision replaces one the node completed: keep that one to roll back to.
            previous = Revision(old.config_body, old.digest, old.inputs, old.secret_inputs)
        values: dict[str, object] = {
            "config": p.config,
            "hook": p.hook,
            "action": p.action.value,
            "status": DeploymentStatus.IN_PROGRESS.value,
            "digest": p.digest,
            "inputs": dict(p.inputs),
            "secret_inputs": list(p.secret_inputs),
            "attempts": attempts,
            "action_id": p.action_id,
            "signal_hash": p.signal_hash,
            "started_at": now,
            "ended_at": None,
            "status_code": None,
            "config_body": config_to_json(p.config_body) if p.config_body is not None else None,
            "previous": previous.to_json() if previous is not None else None,
        }
        # Every row of the batch names the same columns (one executemany).
        kept = p.actions if p.actions is not None else (old.actions if old is not None else None)
        values["actions"] = None if kept is None else [a.value for a in kept]
        if old is None:
            fresh.append(
                {
                    "id": p.id,
                    "project_id": p.project_id,
                    "cluster_id": p.cluster_id,
                    "node_id": p.node_id,
                    "node_name": p.node_name,
                    "name": p.name,
                    "outputs": {},
                    "stdout": "",
                    "stderr": "",
                    "created_at": now,
                    **values,
                }
            )
        else:
            changed.append({"r_id": old.id, **{f"v_{k}": v for k, v in values.items()}})
    if fresh:
        conn.execute(insert(deployments), fresh)
    if changed:
        keys = [k.removeprefix("v_") for k in changed[0] if k.startswith("v_")]
        conn.execute(
            update(deployments)
            .where(deployments.c.id == bindparam("r_id"))
            .values(**{k: bindparam(f"v_{k}") for k in keys}),
            changed,
        )


def finish(conn: Connection, done: Sequence[Finish], now: float) -> list[str]:
    """Record how runs ended; only rows still on that run change. Returns those action ids."""
    if not done:
        return []
    current = _in_progress(conn, [d.action_id for d in done if d.outputs is None])
    current |= _in_progress(conn, [d.action_id for d in done if d.outputs is not None], False)
    rows: list[dict[str, object]] = []
    for d in done:
        found = current.get(d.action_id)
        if found is None:
            continue
        row_id, outputs = found
        rows.append(
            {
                "r_id": row_id,
                "r_action": d.action_id,
                "v_status": d.status.value,
                "v_status_code": d.status_code,
                "v_stdout": tail(d.stdout),
                "v_stderr": tail(d.stderr),
                "v_outputs": dict(d.outputs) if d.outputs is not None else outputs,
                "v_ended_at": now,
            }
        )
    if not rows:
        return []
    stmt = (
        update(deployments)
        .where(
            deployments.c.id == bindparam("r_id"),
            deployments.c.action_id == bindparam("r_action"),
            # Racing signals (agents retry; issue 29): on PostgreSQL a second writer waits for
            # the first's row lock and then finds the run ended, so one result is kept.
            deployments.c.status == DeploymentStatus.IN_PROGRESS.value,
        )
        .values(
            status=bindparam("v_status"),
            status_code=bindparam("v_status_code"),
            stdout=bindparam("v_stdout"),
            stderr=bindparam("v_stderr"),
            outputs=bindparam("v_outputs"),
            ended_at=bindparam("v_ended_at"),
        )
    )
    if len(rows) == 1:
        # One run (a signal): whether this writer is the one that ended it.
        return [str(rows[0]["r_action"])] if conn.execute(stmt, rows[0]).rowcount else []
    conn.execute(stmt, rows)
    return [str(r["r_action"]) for r in rows]


def _in_progress(
    conn: Connection, action_ids: Sequence[str], with_outputs: bool = True
) -> dict[str, tuple[str, dict[str, Json]]]:
    """Action id -> (row id, outputs) of the rows still IN_PROGRESS on these runs: only the
    columns finishing needs (issue 23: reading whole rows, inputs and config bodies, for every
    finished run was a large share of a deployment's cost)."""
    c = deployments.c
    columns = [c.id, c.action_id] + ([c.outputs] if with_outputs else [])
    out: dict[str, tuple[str, dict[str, Json]]] = {}
    for start in range(0, len(action_ids), 500):
        q = select(*columns).where(
            c.action_id.in_(action_ids[start : start + 500]),
            c.status == DeploymentStatus.IN_PROGRESS.value,
        )
        for r in conn.execute(q):
            out[str(r[1])] = (str(r[0]), dict(r[2] or {}) if with_outputs else {})
    return out


def by_action(conn: Connection, action_id: str) -> DeploymentRow | None:
    row = (
        conn.execute(select(deployments).where(deployments.c.action_id == action_id))
        .mappings()
        .first()
    )
    return None if row is None else DeploymentRow.from_row(row)


def by_actions(conn: Connection, action_ids: Iterable[str]) -> dict[str, DeploymentRow]:
    ids = list(action_ids)
    out: dict[str, DeploymentRow] = {}
    for start in range(0, len(ids), 500):
        q = select(deployments).where(deployments.c.action_id.in_(ids[start : start + 500]))
        for r in conn.execute(q).mappings():
            row = DeploymentRow.from_row(r)
            if row.action_id is not None:
                out[row.action_id] = row
    return out


def get(conn: Connection, record_id: str) -> DeploymentRow | None:
    row = conn.execute(select(deployments).where(deployments.c.id == record_id)).mappings().first()
    return None if row is None else DeploymentRow.from_row(row)


_REVISION_COLUMNS = frozenset({"config_body", "previous"})


def for_cluster(
    conn: Connection, cluster_id: str, *, revisions: bool = False
) -> list[DeploymentRow]:
    """The cluster's rows; without `revisions`, the config body and the previous revision each
    row keeps for a rollback are not read (views list every row and never show them)."""
    columns = [c for c in deployments.c if revisions or c.name not in _REVISION_COLUMNS]
    q = (
        select(*columns)
        .where(deployments.c.cluster_id == cluster_id)
        .order_by(deployments.c.name, deployments.c.node_name)
    )
    return [DeploymentRow.from_row(r) for r in conn.execute(q).mappings()]


def _live_rows(cluster_id: str) -> Select[Any]:
    """The cluster's rows on its live nodes (a deleted node's rows stay for its history).
    Each row's node is looked up by its key (a correlated EXISTS), not matched against the list
    of every live node of the cluster: a page in (created_at, id) order then stops after its
    rows (issue 23: with `IN (live nodes)` SQLite built that list, 20,000 node rows, for every
    page, so a watcher's one-row page cost as much as reading the cluster)."""
    live = (
        select(nodes.c.id)
        .where(
            nodes.c.id == deployments.c.node_id,
            nodes.c.cluster_id == cluster_id,
            nodes.c.deleted_at.is_(None),
        )
        .exists()
    )
    return select(*[c for c in deployments.c if c.name not in _REVISION_COLUMNS]).where(
        deployments.c.cluster_id == cluster_id, live
    )


def page_for_cluster(
    conn: Connection,
    cluster_id: str,
    *,
    limit: int,
    marker: str | None,
    status: DeploymentStatus | None = None,
) -> tuple[list[DeploymentRow], bool] | None:
    """Up to `limit` rows of the cluster's live nodes after the row `marker` (by id), in
    (created_at, id) order, of one status when given; and whether more follow. None when the
    marker names no row of that list. Keyset paging in SQL (issue 23): a page costs the same
    at any depth, and no list reads every row of a 100,000-node cluster."""
    q = _live_rows(cluster_id)
    if status is not None:
        q = q.where(deployments.c.status == status.value)
    got = page_rows(conn, deployments, q, limit, marker)
    if got is None:
        return None
    rows, more = got
    return [DeploymentRow.from_row(r) for r in rows], more


def counts_for_cluster(conn: Connection, cluster_id: str) -> dict[DeploymentStatus, int]:
    """The cluster's rows on its live nodes counted by status, in SQL."""
    live = select(nodes.c.id).where(nodes.c.cluster_id == cluster_id, nodes.c.deleted_at.is_(None))
    q = (
        select(deployments.c.status, func.count())
        .where(deployments.c.cluster_id == cluster_id, deployments.c.node_id.in_(live))
        .group_by(deployments.c.status)
    )
    return {DeploymentStatus(r[0]): int(r[1]) for r in conn.execute(q)}


def for_node(conn: Connection, node_id: str) -> list[DeploymentRow]:
    q = select(deployments).where(deployments.c.node_id == node_id).order_by(deployments.c.name)
    return [DeploymentRow.from_row(r) for r in conn.execute(q).mappings()]


def clusters_with_rows(conn: Connection, cluster_ids: Sequence[str]) -> set[str]:
    """Of these clusters, those with any deployment row on a live node (bounded IN lists)."""
    found: set[str] = set()
    live = (
        select(nodes.c.id)
        .where(nodes.c.id == deployments.c.node_id, nodes.c.deleted_at.is_(None))
        .exists()
    )
    for i in range(0, len(cluster_ids), 500):
        part = list(cluster_ids[i : i + 500])
        q = select(deployments.c.cluster_id).where(deployments.c.cluster_id.in_(part), live)
        found.update(str(r[0]) for r in conn.execute(q.distinct()))
    return found


def drop(conn: Connection, row_ids: Sequence[str]) -> None:
    """Delete these rows (deployments retired from nodes that stay, issue 36)."""
    for i in range(0, len(row_ids), 500):
        conn.execute(delete(deployments).where(deployments.c.id.in_(list(row_ids[i : i + 500]))))


def key(conn: Connection, name: str) -> str:
    """The named secret key, made on first use (two first users agree: the insert races)."""
    found = conn.execute(select(software_keys.c.value).where(software_keys.c.name == name)).scalar()
    if found is not None:
        return str(found)
    value = pysecrets.token_hex(32)
    try:
        with conn.begin_nested():
            conn.execute(insert(software_keys).values(name=name, value=value))
    except IntegrityError:
        pass
    found = conn.execute(select(software_keys.c.value).where(software_keys.c.name == name)).scalar()
    assert found is not None
    return str(found)


def records_for(conn: Connection, cluster_id: str) -> list[tuple[str, DeploymentRecord]]:
    """(node id, the resolver's record) of every row of the cluster: only the columns the
    decision reads (no inputs, no stdout/stderr), since it runs on every change."""
    c = deployments.c
    q = select(
        c.node_id, c.name, c.node_name, c.status, c.digest, c.outputs, c.attempts, c.action
    ).where(c.cluster_id == cluster_id)
    return [
        (
            str(r[0]),
            DeploymentRecord(
                deployment=r[1],
                node=r[2],
                status=DeploymentStatus(r[3]),
                digest=r[4],
                outputs=dict(r[5] or {}),
                attempts=int(r[6]),
                action=DeployAction(r[7]),
            ),
        )
        for r in conn.execute(q)
    ]


@dataclass(frozen=True, slots=True)
class Server:
    """A node as deployments need it (the columns `NodeFacts` are made of)."""

    id: str
    name: str
    group_name: str
    part: str | None
    replica: int
    status: NodeStatus
    host: str | None
    zone: str | None
    address: str | None
    provider_id: str | None


def current_servers(conn: Connection, cluster_id: str) -> list[Server]:
    """The cluster's servers standing for declared ones (not deleted, not on their way out,
    not renamed aside), in name order."""
    c = nodes.c
    q = (
        select(
            c.id,
            c.name,
            c.group_name,
            c.part,
            c.replica,
            c.status,
            c.host,
            c.zone,
            c.address,
            c.provider_id,
        )
        .where(
            c.cluster_id == cluster_id,
            c.deleted_at.is_(None),
            c.kind == NodeKind.SERVER.value,
            c.status.not_in([NodeStatus.DELETING.value, NodeStatus.DELETED.value]),
        )
        .order_by(c.name)
    )
    return [
        Server(r[0], r[1], r[2], r[3], int(r[4] or 0), NodeStatus(r[5]), *r[6:10])
        for r in conn.execute(q)
        if "~" not in r[1]
    ]

"""What the orchestration (Heat) façade keeps beside Shoal's clusters (migration 0019).

A stack is a cluster (same id, same name); this module keeps what the Heat client sent (the
body: template, environment, files, parameters) and Heat's fields the cluster row has no
column for, the resources a client marked unhealthy, and Heat's standalone software configs
and deployments. It also answers the façade's questions about actions: the latest top-level
action of each stack (its status) and a stack's top-level actions in order (its events).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, select, update

from shoal.store.actions import SEPARATE_KINDS
from shoal.store.records import ActionRecord
from shoal.store.tables import actions, heat_marks, heat_stacks
from shoal.store.tables import heat_software_configs as configs
from shoal.store.tables import heat_software_deployments as deployments

_CHUNK = 500


@dataclass(frozen=True, slots=True)
class StackRow:
    cluster_id: str
    project_id: str
    name: str
    body: dict[str, Any]
    """template, environment, files, parameters as the client sent them (PATCH reuses them)."""
    disable_rollback: bool
    timeout_mins: int | None
    tags: list[str]
    created_at: float
    updated_at: float | None = None
    deleted_at: float | None = None


def _stack(row: Any) -> StackRow:
    return StackRow(
        row["cluster_id"],
        row["project_id"],
        row["name"],
        dict(row["body"]),
        bool(row["disable_rollback"]),
        row["timeout_mins"],
        list(row["tags"] or []),
        row["created_at"],
        row["updated_at"],
        row["deleted_at"],
    )


def put_stack(conn: Connection, row: StackRow) -> None:
    conn.execute(delete(heat_stacks).where(heat_stacks.c.cluster_id == row.cluster_id))
    conn.execute(
        insert(heat_stacks).values(
            cluster_id=row.cluster_id,
            project_id=row.project_id,
            name=row.name,
            body=row.body,
            disable_rollback=row.disable_rollback,
            timeout_mins=row.timeout_mins,
            tags=row.tags,
            created_at=row.created_at,
            updated_at=row.updated_at,
            deleted_at=row.deleted_at,
        )
    )


def get_stack(conn: Connection, cluster_id: str) -> StackRow | None:
    row = conn.execute(select(heat_stacks).where(heat_stacks.c.cluster_id == cluster_id)).first()
    return None if row is None else _stack(row._mapping)


def find_stacks(
    conn: Connection, project_id: str | None, name: str, *, deleted: bool = False
) -> list[StackRow]:
    """Stacks named `name` (live ones; with `deleted` the deleted ones too), newest first."""
    q = select(heat_stacks).where(heat_stacks.c.name == name)
    if project_id is not None:
        q = q.where(heat_stacks.c.project_id == project_id)
    if not deleted:
        q = q.where(heat_stacks.c.deleted_at.is_(None))
    q = q.order_by(heat_stacks.c.created_at.desc()).limit(100)
    return [_stack(r) for r in conn.execute(q).mappings()]


def list_stacks(conn: Connection, project_id: str | None, limit: int) -> list[StackRow]:
    """Live stacks, oldest first, at most `limit` (the caller filters, sorts and pages)."""
    q = select(heat_stacks).where(heat_stacks.c.deleted_at.is_(None))
    if project_id is not None:
        q = q.where(heat_stacks.c.project_id == project_id)
    q = q.order_by(heat_stacks.c.created_at, heat_stacks.c.cluster_id).limit(limit)
    return [_stack(r) for r in conn.execute(q).mappings()]


def count_stacks(conn: Connection, project_id: str) -> int:
    q = select(func.count()).where(
        heat_stacks.c.project_id == project_id, heat_stacks.c.deleted_at.is_(None)
    )
    return int(conn.execute(q).scalar() or 0)


def set_body(conn: Connection, cluster_id: str, body: dict[str, Any], now: float) -> None:
    conn.execute(
        update(heat_stacks)
        .where(heat_stacks.c.cluster_id == cluster_id)
        .values(body=body, updated_at=now)
    )
    conn.execute(delete(heat_marks).where(heat_marks.c.cluster_id == cluster_id))


def set_deleted(conn: Connection, cluster_id: str, now: float) -> None:
    conn.execute(
        update(heat_stacks).where(heat_stacks.c.cluster_id == cluster_id).values(deleted_at=now)
    )
    conn.execute(delete(heat_marks).where(heat_marks.c.cluster_id == cluster_id))


# -- actions: a stack's statuses and events -------------------------------------------------------


def _top_level(cluster_ids: Sequence[str]) -> Any:
    return and_(
        actions.c.cluster_id.in_(cluster_ids),
        actions.c.parent_id.is_(None),
        actions.c.kind.not_in(SEPARATE_KINDS),
    )


def latest_actions(conn: Connection, cluster_ids: Sequence[str]) -> dict[str, ActionRecord]:
    """The newest top-level action of each cluster (its status is the stack's)."""
    out: dict[str, ActionRecord] = {}
    for start in range(0, len(cluster_ids), _CHUNK):
        chunk = list(cluster_ids[start : start + _CHUNK])
        newest = (
            select(actions.c.cluster_id, func.max(actions.c.created_at).label("at"))
            .where(_top_level(chunk))
            .group_by(actions.c.cluster_id)
            .subquery()
        )
        q = select(actions).join(
            newest,
            and_(actions.c.cluster_id == newest.c.cluster_id, actions.c.created_at == newest.c.at),
        )
        for row in conn.execute(q.where(_top_level(chunk))).mappings():
            rec = ActionRecord.from_row(row)
            seen = out.get(str(rec.cluster_id))
            if seen is None or rec.id > seen.id:  # equal times: one, always the same
                out[str(rec.cluster_id)] = rec
    return out


def stack_actions(conn: Connection, cluster_id: str, limit: int) -> list[ActionRecord]:
    """A stack's top-level actions, oldest first, at most the newest `limit`."""
    q = (
        select(actions)
        .where(_top_level([cluster_id]))
        .order_by(actions.c.created_at.desc(), actions.c.id.desc())
        .limit(limit)
    )
    return [ActionRecord.from_row(r) for r in reversed(list(conn.execute(q).mappings()))]


# -- marks ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mark:
    resource: str
    status: str
    reason: str
    at: float


def set_mark(conn: Connection, cluster_id: str, mark: Mark) -> None:
    conn.execute(
        delete(heat_marks).where(
            heat_marks.c.cluster_id == cluster_id, heat_marks.c.resource == mark.resource
        )
    )
    conn.execute(
        insert(heat_marks).values(
            cluster_id=cluster_id,
            resource=mark.resource,
            status=mark.status,
            reason=mark.reason,
            at=mark.at,
        )
    )


def marks_of(conn: Connection, cluster_id: str) -> dict[str, Mark]:
    q = select(heat_marks).where(heat_marks.c.cluster_id == cluster_id)
    return {
        r["resource"]: Mark(r["resource"], r["status"], r["reason"], r["at"])
        for r in conn.execute(q).mappings()
    }


# -- software configs and deployments made through Heat's API --------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigRow:
    id: str
    project_id: str
    name: str
    group: str
    config: str
    details: dict[str, Any] = field(default_factory=dict)
    """inputs, outputs, options as given."""
    created_at: float = 0.0


def put_config(conn: Connection, row: ConfigRow) -> None:
    conn.execute(
        insert(configs).values(
            id=row.id,
            project_id=row.project_id,
            name=row.name,
            group=row.group,
            config=row.config,
            details=row.details,
            created_at=row.created_at,
        )
    )


def _config(r: Any) -> ConfigRow:
    return ConfigRow(
        r["id"],
        r["project_id"],
        r["name"],
        r["group"],
        r["config"],
        dict(r["details"]),
        r["created_at"],
    )


def get_config(conn: Connection, config_id: str, project_id: str | None) -> ConfigRow | None:
    q = select(configs).where(configs.c.id == config_id)
    if project_id is not None:
        q = q.where(configs.c.project_id == project_id)
    row = conn.execute(q).mappings().first()
    return None if row is None else _config(row)


def get_configs(conn: Connection, ids: Sequence[str]) -> dict[str, ConfigRow]:
    out: dict[str, ConfigRow] = {}
    for start in range(0, len(ids), _CHUNK):
        q = select(configs).where(configs.c.id.in_(list(ids[start : start + _CHUNK])))
        out.update({r["id"]: _config(r) for r in conn.execute(q).mappings()})
    return out


def list_configs(conn: Connection, project_id: str | None, limit: int) -> list[ConfigRow]:
    q = select(configs)
    if project_id is not None:
        q = q.where(configs.c.project_id == project_id)
    q = q.order_by(configs.c.created_at, configs.c.id).limit(limit)
    return [_config(r) for r in conn.execute(q).mappings()]


def count_configs(conn: Connection, project_id: str) -> int:
    q = select(func.count()).where(configs.c.project_id == project_id)
    return int(conn.execute(q).scalar() or 0)


def delete_config(conn: Connection, config_id: str) -> None:
    conn.execute(delete(configs).where(configs.c.id == config_id))


def config_in_use(conn: Connection, config_id: str) -> bool:
    q = select(deployments.c.id).where(deployments.c.config_id == config_id).limit(1)
    return conn.execute(q).first() is not None


@dataclass(frozen=True, slots=True)
class DeploymentRow:
    id: str
    project_id: str
    config_id: str
    server_id: str
    action: str
    status: str
    status_reason: str
    input_values: dict[str, Any]
    output_values: dict[str, Any]
    created_at: float
    updated_at: float | None = None


def _deployment(r: Any) -> DeploymentRow:
    return DeploymentRow(
        r["id"],
        r["project_id"],
        r["config_id"],
        r["server_id"],
        r["action"],
        r["status"],
        r["status_reason"],
        dict(r["input_values"]),
        dict(r["output_values"]),
        r["created_at"],
        r["updated_at"],
    )


def put_deployment(conn: Connection, row: DeploymentRow) -> None:
    conn.execute(delete(deployments).where(deployments.c.id == row.id))
    conn.execute(
        insert(deployments).values(
            id=row.id,
            project_id=row.project_id,
            config_id=row.config_id,
            server_id=row.server_id,
            action=row.action,
            status=row.status,
            status_reason=row.status_reason,
            input_values=row.input_values,
            output_values=row.output_values,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )
    )


def get_deployment(
    conn: Connection, deployment_id: str, project_id: str | None
) -> DeploymentRow | None:
    q = select(deployments).where(deployments.c.id == deployment_id)
    if project_id is not None:
        q = q.where(deployments.c.project_id == project_id)
    row = conn.execute(q).mappings().first()
    return None if row is None else _deployment(row)


def list_deployments(
    conn: Connection, project_id: str | None, server_id: str | None, limit: int
) -> list[DeploymentRow]:
    q = select(deployments)
    if project_id is not None:
        q = q.where(deployments.c.project_id == project_id)
    if server_id is not None:
        q = q.where(deployments.c.server_id == server_id)
    q = q.order_by(deployments.c.created_at, deployments.c.id).limit(limit)
    return [_deployment(r) for r in conn.execute(q).mappings()]


def count_deployments(conn: Connection, project_id: str) -> int:
    q = select(func.count()).where(deployments.c.project_id == project_id)
    return int(conn.execute(q).scalar() or 0)


def delete_deployment(conn: Connection, deployment_id: str) -> None:
    conn.execute(delete(deployments).where(deployments.c.id == deployment_id))

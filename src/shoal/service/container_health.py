"""Deployments whose containers keep exiting (issue 36, item 3): a compose deployment whose
container died and came back ten times a second read COMPLETE. Its stored status stays
COMPLETE (what it ran, it ran: the deployer must not run it again for that), but every view of
it — the API's list and pages, a node's deployments, `shoal deployments`, the dashboard — shows
DEGRADED, with which container, how often it exited, its last exit code and the end of its
output as the reason, for as long as the node's provider reports the loop (the manager keeps
it per node: store/container_loops.py)."""

from __future__ import annotations

from collections.abc import Sequence

from shoal.model.restarts import ContainerLoop, compose_project
from shoal.model.software import DeployAction, DeploymentStatus
from shoal.service.views import iso
from shoal.store import container_loops as loop_repo
from shoal.store import deployments as repo
from shoal.store.database import Connection
from shoal.store.deployments import DeploymentRow

OUTPUT_CHARS = 400


def loop_of(r: DeploymentRow, loops: Sequence[ContainerLoop]) -> ContainerLoop | None:
    """The looping container `r` started, if any: a compose project is named after its
    deployment (heat-agents' hook runs each in a directory of its name)."""
    if r.status is not DeploymentStatus.COMPLETE or r.action is DeployAction.DELETE:
        return None
    project = compose_project(r.name)
    return next((x for x in loops if x.project and x.project == project), None)


def reason(x: ContainerLoop) -> str:
    when = f"it starts again at {iso(x.restart_at)}" if x.restart_at else "it runs again"
    text = (
        f"container {x.container} keeps exiting ({x.exits} exits in a row, last exit code "
        f"{x.exit_code}); restarts back off, {when}"
    )
    output = x.output.strip()
    return f"{text}; its last output: {output[-OUTPUT_CHARS:]}" if output else text


def degraded(conn: Connection, cluster_id: str) -> dict[str, str]:
    """The cluster's deployment rows (by id) whose containers keep exiting, and why."""
    found: dict[str, str] = {}
    for node_id, loops in loop_repo.for_cluster(conn, cluster_id).items():
        found.update(_of_rows(repo.for_node(conn, node_id), loops))
    return found


def degraded_on_node(
    conn: Connection, node_id: str, rows: Sequence[DeploymentRow]
) -> dict[str, str]:
    loops = loop_repo.for_node(conn, node_id)
    return _of_rows(rows, loops) if loops else {}


def _of_rows(rows: Sequence[DeploymentRow], loops: Sequence[ContainerLoop]) -> dict[str, str]:
    found: dict[str, str] = {}
    for r in rows:
        x = loop_of(r, loops)
        if x is not None:
            found[r.id] = reason(x)
    return found

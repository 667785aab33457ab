"""The path every mutating command takes: send the request, wait for its action, report.

Exit 0 when the action succeeded and the cluster is ACTIVE (or, for a delete, gone); 1 when the
action failed or left the cluster in another state. A refused request raises `ApiError` (exit
2) before anything waits. The action belongs to the server's engine: a command that stops
waiting (`--no-wait`, `--timeout`, Ctrl-C, a closed pipe) leaves it running there.
`wait=None` means "wait when talking to the home's background Shoal" (the default of `delete`).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from shoal.cli import screen
from shoal.cli.errors import EXIT_FAILED, EXIT_OK, ApiError
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.pages import all_nodes
from shoal.cli.tables import nodes_table, text

if TYPE_CHECKING:
    from shoal.cli.client import ShoalClient


class Goal(Enum):
    ACTIVE = "active"
    DELETED = "deleted"


async def submit(
    client: ShoalClient,
    method: str,
    path: str,
    *,
    output: OutputFormat,
    wait: bool | None = True,
    timeout: float | None = None,
    goal: Goal = Goal.ACTIVE,
    fresh: bool = False,
    **request: Any,
) -> int:
    """Send one mutating request and see its action through. The exit code."""
    body = await client.call(method, path, **request)
    action: dict[str, Any] = body["action"]
    cluster: dict[str, Any] = body.get("cluster") or {}
    if wait is None:
        wait = client.embedded
    if not wait:
        return _accepted(body, output)
    cluster_id = cluster.get("id") or action.get("cluster_id")
    from shoal.cli.wait import wait_for  # the event loop's modules: only when a command runs

    final = await wait_for(client, action, cluster=cluster_id, timeout=timeout, fresh=fresh)
    if goal is Goal.DELETED:
        return _deleted(final, cluster, output)
    return await _settled(client, final, str(cluster_id or cluster.get("name")), output)


def _accepted(body: dict[str, Any], output: OutputFormat) -> int:
    if output is not OutputFormat.TABLE:
        emit_data(body, output)
        return EXIT_OK
    a = body["action"]
    name = (body.get("cluster") or {}).get("name", "")
    screen.out().print(
        f"accepted: {text(a.get('action'))} {text(a.get('id'))}"
        + (f" for cluster {text(name)}" if name else "")
        + f"; follow it with `shoal action wait {text(a.get('id'))}`"
    )
    return EXIT_OK


def _deleted(final: dict[str, Any], cluster: dict[str, Any], output: OutputFormat) -> int:
    ok = final.get("status") == "SUCCEEDED"
    if output is not OutputFormat.TABLE:
        emit_data({"action": final}, output)
    elif ok:
        screen.out().print(f"cluster {text(cluster.get('name', ''))} deleted")
    if not ok:
        _report_failure(final)
    return EXIT_OK if ok else EXIT_FAILED


async def _settled(
    client: ShoalClient, final: dict[str, Any], ref: str, output: OutputFormat
) -> int:
    try:
        cluster = (await client.get(f"/v1/clusters/{ref}"))["cluster"]
        cluster["nodes"] = await all_nodes(client, str(cluster["id"]))
    except ApiError as e:
        if e.status != 404:
            raise
        cluster = {"name": ref, "status": "DELETED", "nodes": []}
    ok = final.get("status") == "SUCCEEDED" and cluster.get("status") == "ACTIVE"
    if output is not OutputFormat.TABLE:
        emit_data({"action": final, "cluster": cluster}, output)
    else:
        title = f"cluster {text(cluster.get('name'))}: {text(cluster.get('status'))}"
        screen.out().print(nodes_table(cluster.get("nodes") or [], title=title))
    if not ok:
        _report_failure(final, cluster)
    return EXIT_OK if ok else EXIT_FAILED


def _report_failure(final: dict[str, Any], cluster: dict[str, Any] | None = None) -> None:
    err = screen.err()
    reason = final.get("status_reason")
    err.print(
        f"[bold red]action {text(final.get('action'))} {text(final.get('status'))}[/]"
        + (f": {text(reason)}" if reason else "")
    )
    if cluster is not None and cluster.get("status") != "ACTIVE":
        why = cluster.get("status_reason")
        err.print(
            f"cluster {text(cluster.get('name'))} is {text(cluster.get('status'))}"
            + (f": {text(why)}" if why else "")
        )

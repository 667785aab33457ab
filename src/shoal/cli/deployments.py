"""`shoal deployments CLUSTER`: per deployment and node, its status, action, when and exit code.

And `deployment_log`, which `shoal logs NODE --deployment NAME` uses to print one deployment's
last run on a node (stdout, then stderr), from `GET /v1/nodes/{id}/deployments/{name}`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from shoal.cli.client import ShoalClient


@remote()
async def deployments(
    s: Session,
    cluster: Annotated[str, typer.Argument(help="Cluster name or id.")],
) -> int:
    """Show the cluster's software deployments on each node (exit 1 if any FAILED, or
    DEGRADED: a container it started keeps exiting)."""
    from shoal.cli.output import console, emit_data
    from shoal.cli.pages import PAGE
    from shoal.cli.tables import status, table, text, when

    path = f"/v1/clusters/{seg(cluster)}/deployments"
    answer = await s.client.get(path, limit=PAGE)
    found: list[dict[str, Any]] = list(answer["deployments"])
    rollouts: list[dict[str, Any]] = answer.get("rollouts") or []
    marker = answer.get("next_marker")
    while marker:  # the API answers a page at a time (issue 23)
        more = await s.client.get(path, limit=PAGE, marker=marker)
        found += more["deployments"]
        marker = more.get("next_marker")
    from shoal.model.names import natural_key

    found.sort(key=lambda d: (str(d.get("deployment")), natural_key(str(d.get("node")))))
    # Workloads roll beside deployments (issue 22): their rollouts come on every page of the
    # replicas, so one replica is enough to read them.
    replicas = await s.client.get(f"/v1/clusters/{seg(cluster)}/workloads", limit=1)
    workload_rollouts: list[dict[str, Any]] = replicas.get("rollouts") or []
    if not s.table:
        emit_data(
            {"deployments": found, "rollouts": rollouts, "workload_rollouts": workload_rollouts},
            s.output,
        )
    else:
        t = table(
            f"deployments of {cluster}",
            ["DEPLOYMENT", "NODE", "ACTION", "STATUS", "EXIT", "ATTEMPTS", "ENDED"],
        )
        for d in found:
            t.add_row(
                text(d.get("deployment")),
                text(d.get("node")),
                text(d.get("action")),
                status(d.get("status")),
                text(d.get("status_code")),
                text(d.get("attempts")),
                when(d.get("ended_at") or d.get("started_at")),
            )
        console().print(t)
        looping = [d for d in found if d.get("status") == "DEGRADED"]
        if looping:  # (issue 36: a container that keeps exiting, and what it said last)
            lt = table(f"degraded deployments of {cluster}", ["DEPLOYMENT", "NODE", "REASON"])
            for d in looping:
                lt.add_row(
                    text(d.get("deployment")), text(d.get("node")), text(d.get("status_reason"))
                )
            console().print(lt)
        if rollouts:
            r = table(f"rolling updates of {cluster}", ["DEPLOYMENT", "GROUP", "STATE", "UPDATED"])
            for ro in rollouts:
                r.add_row(
                    text(ro.get("deployment")),
                    text(ro.get("group")),
                    text(ro.get("summary")),
                    when(ro.get("updated_at")),
                )
            console().print(r)
        moving = [ro for ro in workload_rollouts if ro.get("phase") != "COMPLETE"]
        if moving:
            w = table(f"workload rollouts of {cluster}", ["WORKLOAD", "PHASE", "STATE", "SURGE"])
            for ro in moving:
                w.add_row(
                    text(ro.get("workload")),
                    text(ro.get("phase")),
                    text(ro.get("summary")),
                    text(len(ro.get("surge") or [])),
                )
            console().print(w)
    bad = ("FAILED", "DEGRADED")
    return EXIT_FAILED if any(d.get("status") in bad for d in found) else EXIT_OK


async def deployment_log(client: ShoalClient, node_id: str, name: str) -> int:
    """Print a deployment's last run on a node: stdout, then stderr (on stderr)."""
    found = await client.get(f"/v1/nodes/{seg(node_id)}/deployments/{seg(name)}")
    d: dict[str, Any] = found["deployment"]
    sys.stdout.write(str(d.get("stdout") or ""))
    sys.stdout.flush()
    sys.stderr.write(str(d.get("stderr") or ""))
    sys.stderr.flush()
    return EXIT_FAILED if d.get("status") == "FAILED" else EXIT_OK

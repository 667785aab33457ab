"""`shoal workloads CLUSTER`: each replica of the cluster's workloads, its node and whether it
is ready (issue 22), read a page at a time up to `--max` replicas, and a line per workload
whose rolling update is under way or rolled back."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_OK

_PAGE = 1000


@remote()
async def workloads(
    s: Session,
    cluster: Annotated[str, typer.Argument(help="Cluster name or id.")],
    most: Annotated[
        int, typer.Option("--max", min=1, max=100_000, help="Show at most this many replicas.")
    ] = 10_000,
) -> int:
    """Show the replicas of the cluster's workloads: node, ready, restarts."""
    from shoal.cli.output import console, emit_data
    from shoal.cli.tables import by_name, table, text, when

    found: list[dict[str, Any]] = []
    rollouts: list[dict[str, Any]] = []
    after: str | None = None
    truncated = False
    while True:
        params: dict[str, Any] = {"limit": min(_PAGE, most - len(found))}
        if after is not None:
            params["after"] = after
        answer = await s.client.get(f"/v1/clusters/{seg(cluster)}/workloads", **params)
        found.extend(answer["replicas"])
        rollouts = answer.get("rollouts") or []
        after = answer.get("next")
        if after is None:
            break
        if len(found) >= most:
            truncated = True
            break
    if not s.table:
        emit_data({"replicas": found, "rollouts": rollouts, "truncated": truncated}, s.output)
        return EXIT_OK
    t = table(
        f"workloads of {cluster}",
        ["REPLICA", "WORKLOAD", "NODE", "READY", "RESTARTS", "STARTED", "REVISION"],
    )
    for r in by_name(found, "replica"):
        t.add_row(
            text(r.get("replica")),
            text(r.get("workload")),
            text(r.get("node")),
            "yes" if r.get("ready") else "no",
            text(r.get("restarts")),
            when(r.get("started_at")),
            text(str(r.get("revision") or "")[:8]),  # as git shortens a commit
        )
    console().print(t)
    for ro in rollouts:
        if ro.get("phase") == "COMPLETE":
            continue
        line = (
            f"rollout {ro.get('workload')}: {ro.get('phase')} to {str(ro.get('revision'))[:8]} "
            f"from {str(ro.get('previous_revision'))[:8]}, {ro.get('batches')} batches"
        )
        if ro.get("batch"):
            line += f", batch in flight: {', '.join(str(x) for x in ro['batch'])}"
        if ro.get("surge"):
            line += f", surge: {', '.join(str(x) for x in ro['surge'])}"
        if ro.get("reason"):
            line += f" ({ro.get('reason')})"
        console().print(line, markup=False)
    if truncated:
        console().print(f"(first {len(found)} replicas; --max shows more)")
    return EXIT_OK

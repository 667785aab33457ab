"""What applying a document to an existing cluster would do: `shoal plan DOC --cluster C` and
`shoal apply DOC --dry-run`.

The API answers (`POST /v1/clusters/{c}/plan`), changing nothing; shown here are the nodes it
would create (with zone and host), the ones it would delete, and the batches of any rolling
update. `-o json|yaml` prints the API's `plan` object as it is. Exit 0 when a plan was shown,
1 when the change cannot be placed (like offline `shoal plan`), 2 for a refused request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shoal.cli import screen
from shoal.cli.command import seg
from shoal.cli.errors import EXIT_FAILED, EXIT_OK, ApiError, escape
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.tables import table, text

if TYPE_CHECKING:
    from shoal.cli.client import ShoalClient


async def fetch_plan(
    client: ShoalClient, cluster: str, content: bytes, kind: str
) -> dict[str, Any]:
    """The API's preview of applying `content` to `cluster`."""
    body = await client.call(
        "POST",
        f"/v1/clusters/{seg(cluster)}/plan",
        content=content,
        headers={"Content-Type": kind},
    )
    plan: dict[str, Any] = body["plan"]
    return plan


async def preview(
    client: ShoalClient, cluster: str, content: bytes, kind: str, output: OutputFormat
) -> int:
    """Show what applying the document `content` to `cluster` would do. The exit code."""
    try:
        plan = await fetch_plan(client, cluster, content, kind)
    except ApiError as e:
        if e.code not in ("unplaceable", "undecided"):
            raise
        e.report()
        return EXIT_FAILED
    if output is OutputFormat.TABLE:
        show_plan(plan)
    else:
        emit_data(plan, output)
    return EXIT_OK


def show_plan(plan: dict[str, Any]) -> None:
    """The plan as tables: creates, deletes, update batches, then a one-line summary."""
    out = screen.out()
    name = text(plan.get("cluster"))
    creates: list[dict[str, Any]] = plan.get("create") or []
    deletes: list[Any] = plan.get("delete") or []
    attaches: list[dict[str, Any]] = plan.get("attach") or []
    batches: list[dict[str, Any]] = plan.get("update_batches") or []
    if creates:
        t = table(f"cluster {name}: create", ("node", "zone", "host"))
        for c in creates:
            t.add_row(text(c.get("node")), text(c.get("zone")), text(c.get("host")))
        out.print(t)
    if deletes:
        t = table(f"cluster {name}: delete", ("node",))
        for d in deletes:
            t.add_row(text(d))
        out.print(t)
    if attaches:
        t = table(f"cluster {name}: attach", ("volume", "server"))
        for a in attaches:
            t.add_row(text(a.get("volume")), text(a.get("server")))
        out.print(t)
    if batches:
        t = table(f"cluster {name}: rolling update", ("batch", "group", "nodes"))
        for number, b in enumerate(batches, start=1):
            t.add_row(str(number), text(b.get("group")), text(b.get("nodes")))
        out.print(t)
    replicas: list[dict[str, Any]] = plan.get("replicas") or []
    if replicas:
        t = table(f"cluster {name}: workloads' replicas", ("replica", "workload", "node", "host"))
        for r in replicas:
            t.add_row(*(text(r.get(k)) for k in ("replica", "workload", "node", "host")))
        out.print(t)
    changes: list[dict[str, Any]] = plan.get("changes") or []
    if changes:
        t = table(
            f"cluster {name}: deployments, workloads, networks",
            ("change", "kind", "name", "node", "why"),
        )
        for c in changes:
            t.add_row(*(text(c.get(k)) for k in ("change", "kind", "name", "node", "why")))
        out.print(t)
    for v in plan.get("soft_violations") or []:
        message = v.get("message") if isinstance(v, dict) else v
        out.print(f"  [yellow]soft:[/] {text(message)}")
    if not (creates or deletes or attaches or batches or changes):
        out.print(f"cluster {escape(name)}: no changes")
        return
    replaced = sum(len(b.get("nodes") or []) for b in batches)
    out.print(
        f"cluster {name}: {len(creates)} to create, {len(deletes)} to delete, "
        f"{replaced} to replace in {len(batches)} batch(es)"
        + (f"; {len(changes)} other change(s)" if changes else "")
    )

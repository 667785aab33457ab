"""`shoal describe cluster|node|action|host NAME`: one object in detail.

`-o json` prints the API's `cluster` object as it is, a contract scripts rely on.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_OK, CliError
from shoal.cli.output import emit_data
from shoal.cli.pages import all_nodes
from shoal.cli.tables import fields_table, nodegroups_table, nodes_table, outputs_table, text

app = typer.Typer(help="Show one object in detail.", no_args_is_help=True)

FIELDS = (
    ("id", "id"),
    ("name", "name"),
    ("status", "status"),
    ("reason", "status_reason"),
    ("desired", "desired_capacity"),
    ("min size", "min_size"),
    ("max size", "max_size"),
    ("running action", "action"),
    ("generation", "generation"),
    ("format", "source_format"),
    ("metadata", "metadata"),
    ("created", "created_at"),
    ("updated", "updated_at"),
)


@app.command("cluster")
@remote()
async def cluster(
    s: Session, name: Annotated[str, typer.Argument(help="Cluster name or id.")]
) -> int:
    """A cluster: its fields, node groups, nodes and outputs."""
    found: dict[str, Any] = (await s.client.get(f"/v1/clusters/{seg(name)}"))["cluster"]
    # the view counts nodes; the nodes themselves come page by page (issue 23)
    found["nodes"] = await all_nodes(s.client, str(found["id"]))
    if not s.table:
        emit_data(found, s.output)
    else:
        show_cluster(found)
    return EXIT_OK


def show_cluster(c: dict[str, Any]) -> None:
    out = screen.out()
    out.print(
        fields_table(
            ((label, c.get(key)) for label, key in FIELDS), f"cluster {text(c.get('name'))}"
        )
    )
    groups = c.get("node_groups") or []
    if groups:
        out.print(nodegroups_table(groups, title="node groups"))
    out.print(nodes_table(c.get("nodes") or [], title="nodes"))
    outputs = c.get("outputs") or []
    if outputs:
        out.print(outputs_table(outputs, title="outputs"))


@app.command("node")
@remote()
async def node(
    s: Session,
    name: Annotated[str, typer.Argument(help="Node name or id.")],
    cluster: Annotated[
        str | None,
        typer.Option("--cluster", "-c", help="The node's cluster, when names repeat."),
    ] = None,
) -> int:
    """A node: status and reason, where it runs, its ids and profile."""
    nodes: list[dict[str, Any]] = await all_nodes(s.client, cluster)
    found = [n for n in nodes if name in (n.get("name"), n.get("id"))]
    if not found:
        where = f" in cluster {cluster}" if cluster else ""
        raise CliError(f"no node {name}{where}")
    if len(found) > 1:
        raise CliError(f"{len(found)} nodes are named {name}; say which with --cluster")
    if not s.table:
        emit_data(found[0], s.output)
    else:
        n = found[0]
        rows = [(k, n.get(k)) for k in NODE_FIELDS]
        screen.out().print(fields_table(rows, f"node {text(n.get('name'))}"))
    return EXIT_OK


@app.command("action")
@remote()
async def action(s: Session, action_id: Annotated[str, typer.Argument(help="Action id.")]) -> int:
    """An action: its kind, status and reason, times, and its steps by status."""
    found: dict[str, Any] = await s.client.get(f"/v1/actions/{seg(action_id)}")
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    a = found.get("action", found)
    rows = [(k, a.get(k)) for k in a if k not in ("inputs", "outputs")]
    rows.append(("steps", found.get("children") or {}))
    screen.out().print(fields_table(rows, f"action {text(a.get('id'))}"))
    return EXIT_OK


@app.command("host")
@remote()
async def host(
    s: Session,
    name: Annotated[str, typer.Argument(help="Host name, as `shoal host list` shows it.")],
) -> int:
    """A host (admin): its zone, failed or not, and the nodes Shoal placed on it."""
    hosts: list[dict[str, Any]] = (await s.client.get("/v1/hosts"))["hosts"]
    nodes: list[dict[str, Any]] = await all_nodes(s.client)
    found = next((h for h in hosts if h.get("name") == name), None)
    if found is None:
        raise CliError(f"no host {name}; `shoal host list` names them")
    on_it = [n for n in nodes if n.get("host") == name]
    if not s.table:
        emit_data({**found, "nodes": on_it}, s.output)
        return EXIT_OK
    out = screen.out()
    out.print(fields_table(list(found.items()), f"host {text(name)}"))
    out.print(nodes_table(on_it, title="nodes on it"))
    return EXIT_OK


NODE_FIELDS = (
    "name",
    "id",
    "status",
    "status_reason",
    "kind",
    "group",
    "cluster_id",
    "zone",
    "host",
    "address",
    "physical_id",
    "attached_to",
    "profile",
    "created_at",
    "updated_at",
)

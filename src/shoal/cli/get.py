"""`shoal get clusters|nodes|actions|events|nodegroups [--cluster X]`: lists, as tables or data.

`-o wide` adds ids and reasons in full, `-o name` prints one name (an id for actions and events)
per line for scripts, `-w` watches: the table again every `--interval` seconds until Ctrl-C.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_OK, CliError
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.pages import all_nodes, every, node_pages
from shoal.cli.tables import (
    actions_table,
    clusters_table,
    events_table,
    nodegroups_table,
    nodes_table,
)

if TYPE_CHECKING:
    from rich.table import Table

    from shoal.cli.client import ShoalClient


class Kind(StrEnum):
    CLUSTERS = "clusters"
    NODES = "nodes"
    ACTIONS = "actions"
    EVENTS = "events"
    NODEGROUPS = "nodegroups"


class GetFormat(StrEnum):
    TABLE = "table"
    WIDE = "wide"
    NAME = "name"
    JSON = "json"
    YAML = "yaml"


ClusterOption = Annotated[
    str | None, typer.Option("--cluster", "-c", help="Only this cluster's (name or id).")
]


@remote(output=False, until_interrupted="watch")
async def get(
    s: Session,
    kind: Annotated[Kind, typer.Argument(help="What to list.")],
    cluster: ClusterOption = None,
    all_actions: Annotated[
        bool, typer.Option("--all", help="actions: node-level steps too, not only top-level.")
    ] = False,
    output: Annotated[
        GetFormat, typer.Option("--output", "-o", help="table, wide, name, json or yaml.")
    ] = GetFormat.TABLE,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Show the list again as it changes, until Ctrl-C.")
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", min=0.2, help="Seconds between two looks with -w.")
    ] = 2.0,
) -> int:
    """List clusters, nodes, actions, events or a cluster's node groups."""
    if kind is Kind.NODEGROUPS and not cluster:
        raise CliError("get nodegroups needs --cluster")
    if kind is Kind.NODES and output is GetFormat.NAME and not watch:
        # streamed: each page printed as it arrives, never all nodes in memory at once
        async for page in node_pages(s.client, cluster):
            show(kind, page, output)
        return EXIT_OK
    items = await fetch(s.client, kind, cluster, all_actions)
    show(kind, items, output)
    shown = items
    if watch:
        import asyncio
    while watch:
        await asyncio.sleep(interval)
        items = await fetch(s.client, kind, cluster, all_actions)
        if items != shown:
            show(kind, items, output)
            shown = items
    return EXIT_OK


def show(kind: Kind, items: list[dict[str, Any]], output: GetFormat) -> None:
    if output is GetFormat.NAME:
        key = "id" if kind in (Kind.ACTIONS, Kind.EVENTS) else "name"
        sys.stdout.write("".join(f"{i.get(key)}\n" for i in items))
        sys.stdout.flush()
    elif output in (GetFormat.JSON, GetFormat.YAML):
        emit_data({str(kind): items}, OutputFormat(output.value))
    else:
        screen.out().print(render(kind, items, wide=output is GetFormat.WIDE))


async def fetch(
    client: ShoalClient, kind: Kind, cluster: str | None, all_actions: bool = False
) -> list[dict[str, Any]]:
    if kind is Kind.CLUSTERS:
        found = await every(client, "/v1/clusters", "clusters")
        return [c for c in found if not cluster or cluster in (c.get("name"), c.get("id"))]
    if kind is Kind.NODES:
        return await all_nodes(client, cluster)
    if kind is Kind.ACTIONS:
        params = {"cluster": cluster, "all": "true" if all_actions else None}
        return await every(client, "/v1/actions", "actions", **params)
    if kind is Kind.NODEGROUPS:
        if cluster is None:
            raise CliError("get nodegroups needs --cluster")
        return list((await client.get(f"/v1/clusters/{seg(cluster)}/nodegroups"))["nodegroups"])
    return await all_events(client, cluster)


async def all_events(client: ShoalClient, cluster: str | None) -> list[dict[str, Any]]:
    """Every event (of one cluster), oldest first, page by page."""
    from shoal.cli.wait import PAGE

    out: list[dict[str, Any]] = []
    after = 0
    while True:
        body = await client.get("/v1/events", cluster=cluster, after=after, limit=PAGE)
        events = body.get("events") or []
        if not events:
            return out
        out.extend(events)
        after = max(int(body.get("next") or 0), int(events[-1]["id"]))


def render(kind: Kind, items: list[dict[str, Any]], *, wide: bool = False) -> Table:
    match kind:
        case Kind.CLUSTERS:
            return clusters_table(items)
        case Kind.NODES:
            return nodes_table(items, wide=wide)
        case Kind.ACTIONS:
            return actions_table(items, wide=wide)
        case Kind.NODEGROUPS:
            return nodegroups_table(items)
        case _:
            return events_table(items)

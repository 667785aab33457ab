"""`shoal get clusters|nodes|actions|events|nodegroups [--cluster X]`: lists, as tables or data."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.table import Table

from shoal.cli import screen
from shoal.cli.client import ShoalClient, connect, seg
from shoal.cli.errors import EXIT_INVALID, EXIT_OK, CliError
from shoal.cli.options import OutputOption, TokenOption, UrlOption, target
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.runner import run
from shoal.cli.tables import (
    actions_table,
    clusters_table,
    events_table,
    nodegroups_table,
    nodes_table,
)
from shoal.cli.wait import PAGE


class Kind(StrEnum):
    CLUSTERS = "clusters"
    NODES = "nodes"
    ACTIONS = "actions"
    EVENTS = "events"
    NODEGROUPS = "nodegroups"


ClusterOption = Annotated[
    str | None, typer.Option("--cluster", "-c", help="Only this cluster's (name or id).")
]


def get(
    kind: Annotated[Kind, typer.Argument(help="What to list.")],
    cluster: ClusterOption = None,
    all_actions: Annotated[
        bool, typer.Option("--all", help="actions: node-level steps too, not only top-level.")
    ] = False,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """List clusters, nodes, actions, events or a cluster's node groups."""
    if kind is Kind.NODEGROUPS and not cluster:
        screen.err().print("[bold red]error:[/] get nodegroups needs --cluster")
        raise typer.Exit(EXIT_INVALID)

    async def body() -> int:
        async with connect(target(url, token)) as client:
            items = await fetch(client, kind, cluster, all_actions)
        if output is not OutputFormat.TABLE:
            emit_data({str(kind): items}, output)
        else:
            screen.out().print(render(kind, items))
        return EXIT_OK

    run(body)


async def fetch(
    client: ShoalClient, kind: Kind, cluster: str | None, all_actions: bool = False
) -> list[dict[str, Any]]:
    if kind is Kind.CLUSTERS:
        found = (await client.get("/v1/clusters"))["clusters"]
        return [c for c in found if not cluster or cluster in (c.get("name"), c.get("id"))]
    if kind is Kind.NODES:
        return list((await client.get("/v1/nodes", cluster=cluster))["nodes"])
    if kind is Kind.ACTIONS:
        params = {"cluster": cluster, "all": "true" if all_actions else None}
        return list((await client.get("/v1/actions", **params))["actions"])
    if kind is Kind.NODEGROUPS:
        if cluster is None:
            raise CliError("get nodegroups needs --cluster")
        return list((await client.get(f"/v1/clusters/{seg(cluster)}/nodegroups"))["nodegroups"])
    return await all_events(client, cluster)


async def all_events(client: ShoalClient, cluster: str | None) -> list[dict[str, Any]]:
    """Every event (of one cluster), oldest first, page by page."""
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        body = await client.get("/v1/events", cluster=cluster, after=after, limit=PAGE)
        events = body.get("events") or []
        if not events:
            return out
        out.extend(events)
        after = max(int(body.get("next") or 0), int(events[-1]["id"]))


def render(kind: Kind, items: list[dict[str, Any]]) -> Table:
    match kind:
        case Kind.CLUSTERS:
            return clusters_table(items)
        case Kind.NODES:
            return nodes_table(items)
        case Kind.ACTIONS:
            return actions_table(items)
        case Kind.NODEGROUPS:
            return nodegroups_table(items)
        case _:
            return events_table(items)

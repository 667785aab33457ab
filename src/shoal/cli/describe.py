"""`shoal describe cluster NAME`: one cluster's fields, node groups and nodes.

`-o json` prints the API's `cluster` object as it is, a contract scripts rely on.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.client import connect, seg
from shoal.cli.errors import EXIT_OK
from shoal.cli.options import OutputOption, TokenOption, UrlOption, target
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.runner import run
from shoal.cli.tables import fields_table, nodegroups_table, nodes_table, text

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
def cluster(
    name: Annotated[str, typer.Argument(help="Cluster name or id.")],
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """A cluster: its fields, node groups and nodes."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found: dict[str, Any] = (await client.get(f"/v1/clusters/{seg(name)}"))["cluster"]
        if output is not OutputFormat.TABLE:
            emit_data(found, output)
        else:
            show_cluster(found)
        return EXIT_OK

    run(body)


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

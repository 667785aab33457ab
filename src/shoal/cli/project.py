"""`shoal project create NAME` (admin): a new tenant and its token, shown once; and
`shoal project quota show|set`: a project's quotas (limits per resource, what is in use)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

import typer
from rich.table import Table

from shoal.cli import screen
from shoal.cli.client import connect
from shoal.cli.errors import EXIT_INVALID, EXIT_OK, CliError
from shoal.cli.options import OutputOption, TokenOption, UrlOption, target
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.runner import run
from shoal.cli.tables import text

app = typer.Typer(help="Projects (tenants): admin only.", no_args_is_help=True)


@app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="Project name.")],
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Create a project and print its token (it is not shown again)."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found = await client.call("POST", "/v1/projects", json={"name": name})
        if output is not OutputFormat.TABLE:
            emit_data(found, output)
            return EXIT_OK
        p = found.get("project", {})
        out = screen.out()
        out.print(f"project {text(p.get('name'))} created, id {text(p.get('id'))}")
        out.print("its token (shown once; give it as --token or SHOAL_TOKEN):")
        print(found.get("token"), flush=True)
        return EXIT_OK

    run(body)


quota_app = typer.Typer(
    help="A project's quotas: limits per resource and what is in use.", no_args_is_help=True
)
app.add_typer(quota_app, name="quota")


def _show_quotas(found: dict[str, Any], output: OutputFormat) -> None:
    if output is not OutputFormat.TABLE:
        emit_data(found, output)
        return
    table = Table(title=f"quotas of project {text(found.get('project'))}")
    for column in ("resource", "limit", "in use", "source"):
        table.add_column(column)
    for resource, q in found.get("quotas", {}).items():
        limit = q.get("limit")
        table.add_row(
            text(resource),
            "unlimited" if limit == -1 else text(limit),
            text(q.get("in_use")),
            "default" if q.get("default") else "project",
        )
    screen.out().print(table)


@quota_app.command("show")
def quota_show(
    project: Annotated[str, typer.Argument(help="Project name or id.")],
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Show a project's quotas (its own token, or an admin's)."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found = await client.call("GET", f"/v1/projects/{quote(project, safe='')}/quotas")
        _show_quotas(found, output)
        return EXIT_OK

    run(body)


@quota_app.command("set")
def quota_set(
    project: Annotated[str, typer.Argument(help="Project name or id.")],
    limits: Annotated[
        list[str],
        typer.Argument(
            help="RESOURCE=LIMIT pairs: clusters, nodes, vcpus, ram_mb, volume_gb; -1 is unlimited."
        ),
    ],
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Set a project's quotas (admin)."""

    async def body() -> int:
        values: dict[str, int] = {}
        for item in limits:
            resource, sep, number = item.partition("=")
            if not sep or not number.lstrip("-").isdigit() or len(number) > 12:
                raise CliError(f"{item!r}: give RESOURCE=LIMIT, e.g. nodes=100", EXIT_INVALID)
            values[resource] = int(number)
        async with connect(target(url, token)) as client:
            found = await client.call(
                "PUT",
                f"/v1/projects/{quote(project, safe='')}/quotas",
                json={"quotas": values},
            )
        _show_quotas(found, output)
        return EXIT_OK

    run(body)

"""`shoal project create NAME` (admin): a new tenant and its token, shown once."""

from __future__ import annotations

from typing import Annotated

import typer

from shoal.cli import screen
from shoal.cli.client import connect
from shoal.cli.errors import EXIT_OK
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

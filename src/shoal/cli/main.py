"""The `shoal` command's root: sub-commands register here; `run` is the console entry point."""

from __future__ import annotations

from typing import Annotated

import typer

from shoal import __version__
from shoal.cli import (
    action,
    clusters,
    deployments,
    describe,
    events,
    get,
    host,
    keystone,
    login,
    logs,
    nodegroup,
    plan,
    project,
    receiver,
    recover,
    server,
)

app = typer.Typer(
    name="shoal",
    help="Declare a virtual cluster once; Shoal places it whole, creates it and keeps it healthy.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    # Plain click help: never cut at the terminal's width, never wrapped in boxes when piped,
    # and it spares every command typer's Rich help (Markdown, Pygments: a third of a second).
    rich_markup_mode=None,
)
app.command("plan")(plan.plan)
app.add_typer(server.app, name="server")
app.command("up")(clusters.up)
app.command("apply")(clusters.apply)
app.command("get")(get.get)
app.add_typer(describe.app, name="describe")
app.command("delete")(clusters.delete)
app.command("scale")(clusters.scale)
app.command("recover")(recover.recover)
app.add_typer(nodegroup.app, name="nodegroup")
app.command("events")(events.events)
app.command("logs")(logs.logs)
app.command("deployments")(deployments.deployments)
app.add_typer(action.app, name="action")
app.add_typer(project.app, name="project")
app.add_typer(host.app, name="host")
app.add_typer(keystone.app, name="keystone")
app.command("login")(login.login)
app.add_typer(receiver.app, name="receiver")
app.add_typer(receiver.webhook_app, name="webhook")


def _version(shown: bool) -> None:
    if shown:
        print(f"shoal {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Shoal: whole-cluster placement and orchestration.

    Every command but `plan` talks to Shoal's HTTP API: a server at --url / SHOAL_URL, or by
    default the background Shoal of the data directory SHOAL_HOME, which the first command
    starts (`shoal server status`, `shoal server stop`).
    """


def run() -> None:
    app()

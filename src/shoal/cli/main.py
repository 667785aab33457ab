"""The `shoal` command's root: sub-commands register here; `run` is the console entry point."""

from __future__ import annotations

import typer

from shoal.cli import (
    action,
    clusters,
    describe,
    events,
    get,
    host,
    keystone,
    login,
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
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("plan")(plan.plan)
app.command("server")(server.server)
app.command("up")(clusters.up)
app.command("apply")(clusters.apply)
app.command("get")(get.get)
app.add_typer(describe.app, name="describe")
app.command("delete")(clusters.delete)
app.command("scale")(clusters.scale)
app.command("recover")(recover.recover)
app.add_typer(nodegroup.app, name="nodegroup")
app.command("events")(events.events)
app.add_typer(action.app, name="action")
app.add_typer(project.app, name="project")
app.add_typer(host.app, name="host")
app.add_typer(keystone.app, name="keystone")
app.command("login")(login.login)
app.add_typer(receiver.app, name="receiver")
app.add_typer(receiver.webhook_app, name="webhook")


@app.callback()
def _root() -> None:
    """Shoal: whole-cluster placement and orchestration.

    Every command but `plan` talks to Shoal's HTTP API: a server at --url / SHOAL_URL, or by
    default Shoal embedded in the command itself, on the data directory SHOAL_HOME.
    """


def run() -> None:
    app()

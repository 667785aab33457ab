"""The `shoal` command's root: sub-commands register here; `run` is the console entry point."""

from __future__ import annotations

import typer

from shoal.cli import plan

app = typer.Typer(
    name="shoal",
    help="Declare a virtual cluster once; Shoal places it whole, creates it and keeps it healthy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("plan")(plan.plan)


@app.callback()
def _root() -> None:
    """Shoal: whole-cluster placement and orchestration."""


def run() -> None:
    app()

"""The `shoal` command's root: sub-commands register here; `run` is the console entry point.

`run` imports and registers only the command the command line names (`shoal get ...` needs
neither `up` nor `project`); root help, completion and unknown names get every command.
Typer builds each registered command's options from its signature, so this halves the
start-up of a command (benchmarks/cli.py).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from shoal import __version__


@dataclass(frozen=True, slots=True)
class Entry:
    """A top-level command: `attribute` of `module`, a function or a sub-app (a group)."""

    name: str
    module: str
    attribute: str
    group: bool = False


COMMANDS = (
    Entry("plan", "plan", "plan"),
    Entry("server", "server", "app", group=True),
    Entry("up", "clusters", "up"),
    Entry("apply", "clusters", "apply"),
    Entry("get", "get", "get"),
    Entry("describe", "describe", "app", group=True),
    Entry("delete", "clusters", "delete"),
    Entry("scale", "clusters", "scale"),
    Entry("recover", "recover", "recover"),
    Entry("nodegroup", "nodegroup", "app", group=True),
    Entry("events", "events", "events"),
    Entry("logs", "logs", "logs"),
    Entry("deployments", "deployments", "deployments"),
    Entry("workloads", "workloads", "workloads"),  # issue 22: replicas, node, ready
    Entry("action", "action", "app", group=True),
    Entry("project", "project", "app", group=True),
    Entry("host", "host", "app", group=True),
    Entry("image", "image", "app", group=True),
    Entry("keystone", "keystone", "app", group=True),
    Entry("login", "login", "login"),
    Entry("receiver", "receiver", "app", group=True),
    Entry("webhook", "receiver", "webhook_app", group=True),
    Entry("import", "import_senlin", "app", group=True),
)
NAMES = frozenset(e.name for e in COMMANDS)


def _version(shown: bool) -> None:
    if shown:
        print(f"shoal {__version__}")
        raise typer.Exit(0)


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


def build(names: Collection[str] | None = None) -> typer.Typer:
    """The `shoal` app with the commands `names` (default: all of them)."""
    app = typer.Typer(
        name="shoal",
        help="Declare a virtual cluster once; Shoal places it whole, creates it and keeps it "
        "healthy.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        # Plain click help: never cut at the terminal's width, never wrapped in boxes when
        # piped, and it spares every command typer's Rich help (Markdown, Pygments).
        rich_markup_mode=None,
    )
    app.callback()(_root)
    for entry in COMMANDS:
        if names is not None and entry.name not in names:
            continue
        found: Any = getattr(importlib.import_module(f"shoal.cli.{entry.module}"), entry.attribute)
        if entry.group:
            app.add_typer(found, name=entry.name)
        else:
            app.command(entry.name)(found)
    return app


def named(argv: list[str]) -> str | None:
    """The one command `argv` runs, if the app needs no other to run it."""
    if any(k.endswith("_COMPLETE") for k in os.environ):
        return None  # shell completion: every command's name
    if argv and argv[0] in NAMES:
        return argv[0]
    return None  # root help, --version, a misspelt name ("did you mean")


def __getattr__(name: str) -> typer.Typer:
    """`main.app`: every command, for tests that drive the app in-process."""
    if name == "app":
        return build()
    raise AttributeError(name)


def run() -> None:
    command = named(sys.argv[1:])
    build(None if command is None else {command})()

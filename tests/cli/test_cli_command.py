"""`@remote`: the options every remote command shares, and the run it wraps around its body.

In-process (typer's runner), with bodies that never touch `Session.client`: no server needed.
The real commands are covered end to end by the other tests in this folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated

import typer
from typer.testing import CliRunner

from shoal.cli.command import Session, remote
from shoal.cli.errors import EXIT_FAILED, CliError
from shoal.cli.main import COMMANDS, build, named
from shoal.cli.output import OutputFormat

seen: list[Session] = []


def app_of(*commands: Callable[..., None]) -> typer.Typer:
    app = typer.Typer(rich_markup_mode=None)
    app.callback()(lambda: None)  # a group: each command by its name
    for command in commands:
        app.command()(command)
    return app


@remote()
async def show(
    s: Session, name: Annotated[str, typer.Argument(help="What to show.")], loud: bool = False
) -> int:
    """Show NAME."""
    seen.append(s)
    if name == "bad":
        raise CliError("no such thing", EXIT_FAILED)
    print(json.dumps({"name": name, "loud": loud}))
    return 3


@remote(output=False, until_interrupted="watch")
async def watch(s: Session, watch: bool = False) -> int:
    """Watch until Ctrl-C."""
    seen.append(s)
    raise KeyboardInterrupt


def test_the_shared_options_come_after_the_commands_own() -> None:
    shown = CliRunner().invoke(app_of(show, watch), ["show", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    options = re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", shown.output, re.MULTILINE)
    assert options == ["--loud", "--output", "--url", "--token", "--help"], shown.output
    assert "Show NAME." in shown.output and "What to show." in shown.output
    bare = CliRunner().invoke(app_of(show, watch), ["watch", "--help"], env={"COLUMNS": "200"})
    assert "--output" not in bare.output and "--url" in bare.output


def test_the_body_gets_the_session_and_its_exit_code_is_the_commands() -> None:
    seen.clear()
    app = app_of(show, watch)
    ran = CliRunner().invoke(
        app, ["show", "it", "--loud", "-o", "json", "--url", "http://x:1", "--token", "t"], env={}
    )
    assert ran.exit_code == 3, ran.output
    assert json.loads(ran.stdout) == {"name": "it", "loud": True}
    (s,) = seen
    assert (s.target.url, s.target.token, s.output) == ("http://x:1", "t", OutputFormat.JSON)
    assert not s.table
    # empty values mean "not given"; errors are told and end with their code
    failed = CliRunner().invoke(app, ["show", "bad", "--url", ""], env={"SHOAL_TOKEN": ""})
    assert failed.exit_code == EXIT_FAILED and "no such thing" in failed.output
    assert (seen[-1].target.url, seen[-1].target.token) == (None, None)
    assert seen[-1].table


def test_ctrl_c_ends_a_watch_quietly_and_anything_else_with_130() -> None:
    app = app_of(show, watch)
    assert CliRunner().invoke(app, ["watch", "--watch"], env={}).exit_code == 0
    assert CliRunner().invoke(app, ["watch"], env={}).exit_code == 130


def test_run_registers_only_the_command_it_runs() -> None:
    assert named(["get", "clusters"]) == "get"
    assert named(["--help"]) is None and named(["--version"]) is None
    assert named(["gte", "clusters"]) is None  # every command, for "did you mean"
    assert named([]) is None
    one = build({"get"})
    assert [c.name for c in one.registered_commands] == ["get"]
    everything = build()
    names = [c.name for c in everything.registered_commands]
    names += [g.name for g in everything.registered_groups]
    assert sorted(str(n) for n in names) == sorted(e.name for e in COMMANDS)

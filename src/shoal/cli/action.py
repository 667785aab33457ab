"""`shoal action show ID`, `shoal action wait ID` and `shoal action cancel ID`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.client import connect, seg
from shoal.cli.errors import EXIT_FAILED, EXIT_OK
from shoal.cli.options import OutputOption, TimeoutOption, TokenOption, UrlOption, target
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.runner import run
from shoal.cli.tables import fields_table, plain, status
from shoal.cli.wait import wait_for

app = typer.Typer(help="Look at and cancel actions.", no_args_is_help=True)

IdArg = Annotated[str, typer.Argument(help="Action id.")]

FIELDS = (
    ("id", "id"),
    ("action", "action"),
    ("status", "status"),
    ("reason", "status_reason"),
    ("cluster", "cluster_id"),
    ("node", "node_id"),
    ("parent", "parent"),
    ("inputs", "inputs"),
    ("attempts", "attempts"),
    ("cancel requested", "cancel_requested"),
    ("owner", "owner"),
    ("created", "created_at"),
    ("started", "start_time"),
    ("ended", "end_time"),
)


@app.command("show")
def show(
    action_id: IdArg,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """An action's status, inputs and the count of its steps by status."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found = await client.get(f"/v1/actions/{seg(action_id)}")
        if output is not OutputFormat.TABLE:
            emit_data(found, output)
        else:
            show_action(found.get("action", {}), found.get("children") or {})
        return EXIT_OK

    run(body)


@app.command("wait")
def wait(
    action_id: IdArg,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Wait until an action ends: exit 0 if it succeeded, 1 if not.

    Embedded, this runs the engine meanwhile, so it also resumes an action whose command was
    interrupted (once that engine's lease has run out).
    """

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found = await client.get(f"/v1/actions/{seg(action_id)}")
            a = found.get("action", {})
            final = await wait_for(client, a, cluster=a.get("cluster_id"), timeout=timeout)
        if output is not OutputFormat.TABLE:
            emit_data({"action": final}, output)
        else:
            screen.out().print(f"action {plain(final.get('action'))} {status(final.get('status'))}")
        return EXIT_OK if final.get("status") == "SUCCEEDED" else EXIT_FAILED

    run(body)


@app.command("cancel")
def cancel(
    action_id: IdArg,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Ask a running action to stop (steps already done stay done)."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found = await client.call("POST", f"/v1/actions/{seg(action_id)}/cancel")
        if output is not OutputFormat.TABLE:
            emit_data(found, output)
        else:
            a = found.get("action", {})
            screen.out().print(
                f"cancel requested for {plain(a.get('action'))} {plain(a.get('id'))}: "
                f"now {plain(a.get('status'))}"
            )
        return EXIT_OK

    run(body)


def show_action(a: dict[str, Any], children: dict[str, Any]) -> None:
    rows = [(label, a.get(key)) for label, key in FIELDS]
    if children:
        rows.append(("steps", ", ".join(f"{k} {v}" for k, v in children.items())))
    screen.out().print(fields_table(rows, f"action {plain(a.get('id'))}"))

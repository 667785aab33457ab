"""`shoal action show ID`, `shoal action wait ID` and `shoal action cancel ID`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_FAILED, EXIT_OK
from shoal.cli.options import TimeoutOption
from shoal.cli.output import emit_data
from shoal.cli.tables import fields_table, plain, status

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
@remote()
async def show(s: Session, action_id: IdArg) -> int:
    """An action's status, inputs and the count of its steps by status."""
    found = await s.client.get(f"/v1/actions/{seg(action_id)}")
    if not s.table:
        emit_data(found, s.output)
    else:
        show_action(found.get("action", {}), found.get("children") or {})
    return EXIT_OK


@app.command("wait")
@remote()
async def wait(s: Session, action_id: IdArg, timeout: TimeoutOption = None) -> int:
    """Wait until an action ends: exit 0 if it succeeded, 1 if not.

    Embedded, this runs the engine meanwhile, so it also resumes an action whose command was
    interrupted (once that engine's lease has run out).
    """
    from shoal.cli.wait import wait_for

    found = await s.client.get(f"/v1/actions/{seg(action_id)}")
    a = found.get("action", {})
    final = await wait_for(s.client, a, cluster=a.get("cluster_id"), timeout=timeout)
    if not s.table:
        emit_data({"action": final}, s.output)
    else:
        screen.out().print(f"action {plain(final.get('action'))} {status(final.get('status'))}")
    return EXIT_OK if final.get("status") == "SUCCEEDED" else EXIT_FAILED


@app.command("cancel")
@remote()
async def cancel(s: Session, action_id: IdArg) -> int:
    """Ask a running action to stop (steps already done stay done)."""
    found = await s.client.call("POST", f"/v1/actions/{seg(action_id)}/cancel")
    if not s.table:
        emit_data(found, s.output)
    else:
        a = found.get("action", {})
        screen.out().print(
            f"cancel requested for {plain(a.get('action'))} {plain(a.get('id'))}: "
            f"now {plain(a.get('status'))}"
        )
    return EXIT_OK


def show_action(a: dict[str, Any], children: dict[str, Any]) -> None:
    rows = [(label, a.get(key)) for label, key in FIELDS]
    if children:
        rows.append(("steps", ", ".join(f"{k} {v}" for k, v in children.items())))
    screen.out().print(fields_table(rows, f"action {plain(a.get('id'))}"))

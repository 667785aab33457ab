"""Waiting for an action: a status line fed by polling the action, and its events as they come.

Progress goes to stderr, so `-o json` output on stdout stays clean. The events shown are the
cluster's from this action's first one on (`GET /v1/events?cluster=..&after=..&wait=..`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console

from shoal.cli import screen
from shoal.cli.client import ShoalClient
from shoal.cli.errors import EXIT_FAILED, ApiError, CliError
from shoal.cli.tables import event_line

TERMINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
DONE = ("SUCCEEDED", "FAILED", "CANCELLED")
PAGE = 500
POLL_S = 0.25
LONG_POLL_S = 1


class WaitTimeout(CliError):
    def __init__(self, action: dict[str, Any], timeout: float) -> None:
        later = f"it goes on; follow it with `shoal action wait {action.get('id')}`"
        super().__init__(
            f"gave up waiting after {timeout:g}s: action {action.get('id')} is "
            f"{action.get('status')}; {later}",
            EXIT_FAILED,
        )


async def first_event_before(client: ShoalClient, cluster: str, action_id: str) -> int:
    """The event id just before `action_id`'s first event in the cluster's log."""
    after = 0
    while True:
        events, after_page = await _page(client, cluster, after, None)
        for e in events:
            if e.get("action") == action_id:
                return int(e["id"]) - 1
        if not events:
            return after
        after = after_page


async def wait_for(
    client: ShoalClient,
    action: dict[str, Any],
    *,
    cluster: str | None,
    timeout: float | None = None,
    fresh: bool = False,
) -> dict[str, Any]:
    """Poll until `action` ends; print its cluster's events on stderr. The final action view.

    `fresh`: the cluster is new, so all its events belong to this action.
    """
    action_id = str(action["id"])
    cursor = 0
    if cluster and not fresh:
        cursor = await first_event_before(client, cluster, action_id)
    err = screen.err()
    deadline = None if timeout is None else time.monotonic() + timeout
    started = time.monotonic()
    with err.status(_line(action, {}, 0.0)) as line, _on_interrupt(err, action_id, client):
        while True:
            body = await client.get(f"/v1/actions/{action_id}")
            current: dict[str, Any] = body.get("action", body)
            line.update(_line(current, body.get("children") or {}, time.monotonic() - started))
            ended = current.get("status") in TERMINAL
            if cluster:
                cursor = await _show_events(client, err, cluster, cursor, drain=ended)
            elif not ended:
                await asyncio.sleep(POLL_S)
            if ended:
                return current
            if deadline is not None and time.monotonic() > deadline:
                raise WaitTimeout(current, timeout or 0.0)


async def _show_events(
    client: ShoalClient, err: Console, cluster: str, cursor: int, *, drain: bool
) -> int:
    """Print the events after `cursor`; long-poll a little unless draining. The new cursor."""
    begun = time.monotonic()
    while True:
        try:
            events, cursor_after = await _page(
                client, cluster, cursor, None if drain else LONG_POLL_S
            )
        except ApiError:
            events, cursor_after = [], cursor  # the cluster is gone: its events no longer show
        for e in events:
            err.print(event_line(e))
        cursor = cursor_after
        if drain and events:
            continue
        if not drain and not events and time.monotonic() - begun < POLL_S:
            await asyncio.sleep(POLL_S)  # answered at once: do not spin
        return cursor


async def _page(
    client: ShoalClient, cluster: str | None, after: int, wait: float | None
) -> tuple[list[dict[str, Any]], int]:
    body = await client.get("/v1/events", cluster=cluster, after=after, limit=PAGE, wait=wait)
    events = [e for e in body.get("events") or [] if isinstance(e, dict)]
    nxt = body.get("next")
    if events:
        nxt = max(int(nxt or 0), int(events[-1]["id"]))
    return events, int(nxt if nxt is not None else after)


@contextmanager
def _on_interrupt(err: Console, action_id: str, client: ShoalClient) -> Iterator[None]:
    """On Ctrl-C, say that the action itself goes on."""
    try:
        yield
    except asyncio.CancelledError:
        err.print(
            f"stopped waiting; action {action_id} goes on in the server "
            f"(`shoal action wait {action_id}` follows it)"
        )
        raise


def _line(action: dict[str, Any], children: dict[str, Any], elapsed: float) -> str:
    total = sum(int(v) for v in children.values())
    done = sum(int(children.get(s, 0)) for s in DONE)
    steps = f" · {done}/{total} steps" if total else ""
    failed = int(children.get("FAILED", 0))
    failures = f" · [red]{failed} failed[/]" if failed else ""
    return (
        f"{action.get('action', 'action')} [bold]{action.get('status', '')}[/]"
        f"{steps}{failures} · {elapsed:.0f}s"
    )

"""`shoal events [--cluster X] [-f]`: the event log; `-f` follows it until Ctrl-C.

Following long-polls `GET /v1/events?after=..&wait=10` and prints each event as it comes: a
log line for people, one JSON object per line with `-o json`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.client import ShoalClient, connect
from shoal.cli.get import all_events
from shoal.cli.options import OutputOption, TokenOption, UrlOption, target
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.runner import run
from shoal.cli.tables import event_line, events_table
from shoal.cli.wait import PAGE, POLL_S

FOLLOW_WAIT_S = 10


def events(
    cluster: Annotated[
        str | None, typer.Option("--cluster", "-c", help="Only this cluster's (name or id).")
    ] = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events until Ctrl-C.")
    ] = False,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Show what happened: cluster, node and action events, oldest first."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            if follow:
                await follow_events(client, cluster, output)
            found = await all_events(client, cluster)
        if output is not OutputFormat.TABLE:
            emit_data({"events": found}, output)
        else:
            screen.out().print(events_table(found))
        return 0

    run(body, until_interrupted=follow)


async def follow_events(client: ShoalClient, cluster: str | None, output: OutputFormat) -> None:
    """Print events as they come, forever (the caller ends it with Ctrl-C)."""
    out = screen.out()
    after = 0
    while True:
        asked = time.monotonic()
        body = await client.get(
            "/v1/events", cluster=cluster, after=after, limit=PAGE, wait=FOLLOW_WAIT_S
        )
        found: list[dict[str, Any]] = body.get("events") or []
        for e in found:
            if output is OutputFormat.TABLE:
                out.print(event_line(e))
            elif output is OutputFormat.JSON:
                sys.stdout.write(json.dumps(e) + "\n")
            else:
                emit_data([e], output)
        sys.stdout.flush()
        if found:
            after = max(int(body.get("next") or 0), int(found[-1]["id"]))
        elif time.monotonic() - asked < POLL_S:
            await asyncio.sleep(POLL_S)  # answered at once without events: do not spin

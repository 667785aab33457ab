"""`shoal events [--cluster X] [--since T] [--limit N] [-f]`: the event log; `-f` follows it.

Following long-polls `GET /v1/events?after=..&wait=10` and prints each event as it comes: a
log line for people, one JSON object per line with `-o json`. It ends at Ctrl-C, or cleanly
(exit 0) when the cluster it follows is deleted. `--since` takes a duration (`90s`, `10m`,
`2h`, `1d`) or an ISO time; `--limit N` shows the last N events.
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote
from shoal.cli.errors import EXIT_INVALID, ApiError, CliError
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.tables import event_line, events_table

if TYPE_CHECKING:
    from shoal.cli.client import ShoalClient

FOLLOW_WAIT_S = 10


@remote(until_interrupted="follow")
async def events(
    s: Session,
    cluster: Annotated[
        str | None, typer.Option("--cluster", "-c", help="Only this cluster's (name or id).")
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Keep printing new events until Ctrl-C (or until the cluster is deleted).",
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only events since: a duration (90s, 10m, 2h, 1d) or a time."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Only the last N events.")
    ] = None,
) -> int:
    """Show what happened: cluster, node and action events, oldest first."""
    from shoal.cli.get import all_events

    cutoff = since_time(since) if since else None
    if follow:
        await follow_events(s.client, cluster, s.output)
        return 0
    found = await all_events(s.client, cluster)
    if cutoff is not None:
        found = [e for e in found if str(e.get("timestamp") or "") >= cutoff]
    if limit is not None:
        found = found[-limit:]
    if not s.table:
        emit_data({"events": found}, s.output)
    else:
        screen.out().print(events_table(found))
    return 0


async def follow_events(client: ShoalClient, cluster: str | None, output: OutputFormat) -> None:
    """Print events as they come: until Ctrl-C, or until the followed cluster is deleted."""
    import asyncio

    from shoal.cli.wait import PAGE, POLL_S

    out = screen.out()
    after = 0
    while True:
        asked = time.monotonic()
        try:
            body = await client.get(
                "/v1/events", cluster=cluster, after=after, limit=PAGE, wait=FOLLOW_WAIT_S
            )
        except ApiError as refused:
            if cluster is not None and refused.status == 404:
                return  # deleted while we waited, its last events already shown
            raise
        found: list[dict[str, Any]] = body.get("events") or []
        for e in found:
            if output is OutputFormat.TABLE:
                out.print(event_line(e))
            elif output is OutputFormat.JSON:
                sys.stdout.write(json.dumps(e) + "\n")
            else:
                emit_data([e], output)
        sys.stdout.flush()
        if cluster is not None and any(_deleted(e) for e in found):
            return
        if found:
            after = max(int(body.get("next") or 0), int(found[-1]["id"]))
        elif time.monotonic() - asked < POLL_S:
            await asyncio.sleep(POLL_S)  # answered at once without events: do not spin


def _deleted(e: dict[str, Any]) -> bool:
    return e.get("obj_type") == "CLUSTER" and e.get("status") == "DELETED"


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def since_time(value: str) -> str:
    """`--since` as the ISO time (UTC, like the events') it means."""
    found = _DURATION.match(value.strip())
    if found:
        delta = timedelta(**{_UNITS[found.group(2)]: float(found.group(1))})
        moment = datetime.now(UTC) - delta
    else:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise CliError(
                f"--since {value!r}: give a duration like 90s, 10m, 2h, 1d or a time like "
                "2026-01-31T12:00:00",
                EXIT_INVALID,
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")

"""A change asked of a cluster busy with another action waits for that action, instead of
failing (issue 39): after a restart the manager may be repairing the cluster the user wants to
delete, and "cluster X is busy with action ..." then is no answer to `shoal delete X --wait`.

The API says which action holds the cluster in its 409's details (`action_id`, a fact, never
read from the message); the command says what it waits for and for how long, waits for it to
end, and asks again.
"""

from __future__ import annotations

import time
from typing import Any

from shoal.cli import screen
from shoal.cli.client import ShoalClient
from shoal.cli.errors import ApiError, escape
from shoal.cli.output import OutputFormat
from shoal.cli.submit import Goal, submit

MAX_TRIES = 20
"""Actions waited for at most, one after the other (each holder a new one: a busy manager)."""


def holder(e: ApiError) -> str | None:
    """The action a 409 says holds the cluster, or None for any other refusal."""
    if e.status != 409:
        return None
    for d in e.details:
        found = d.get("action_id")
        if isinstance(found, str) and found:
            return found
    return None


async def submit_when_free(
    client: ShoalClient,
    method: str,
    path: str,
    *,
    output: OutputFormat,
    timeout: float | None,
    goal: Goal,
) -> int:
    """`submit` (waiting), after the action holding the cluster has ended; the exit code."""
    from shoal.cli.wait import WaitTimeout, wait_for

    deadline = None if timeout is None else time.monotonic() + timeout
    for _ in range(MAX_TRIES):
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            return await submit(
                client, method, path, output=output, wait=True, timeout=left, goal=goal
            )
        except ApiError as e:
            action_id = holder(e)
            if action_id is None:
                raise
            running = await _action(client, action_id)
            _say(running, left)
            if left is not None and left <= 0:
                raise WaitTimeout(running, timeout or 0.0) from None
            await wait_for(client, running, cluster=None, timeout=left)
    return await submit(client, method, path, output=output, wait=True, timeout=None, goal=goal)


async def _action(client: ShoalClient, action_id: str) -> dict[str, Any]:
    body = await client.get(f"/v1/actions/{action_id}")
    found: dict[str, Any] = body.get("action", body)
    return found


def _say(action: dict[str, Any], left: float | None) -> None:
    how_long = "as long as it runs" if left is None else f"up to {left:.0f}s (--timeout)"
    screen.err().print(
        f"the cluster is busy with action {escape(str(action.get('id')))} "
        f"({escape(str(action.get('action', '')))}, {escape(str(action.get('status', '')))}); "
        f"waiting for it to end, {how_long}"
    )

"""The one way tests wait: poll a condition until it holds, with a deadline generous enough for a
loaded machine (the suite runs in parallel on two cores beside real services), never asserting
how long it took.

    eventually(lambda: proc.poll() is not None, "the server to exit")    # from sync code
    await until(lambda: done(rig, cid), lambda: f"ended: {rows(rig)}")   # from async code
    await until(check, clock=clock, step_s=0.5)    # moving a ManualClock on at each miss

The condition's truthy value is returned; at the deadline an AssertionError names `what` (a
string, or a callable asked for it then, e.g. the last state seen) and the condition's last
value. An async condition may return an awaitable; `in_thread` runs a blocking condition off
the event loop (a store read while the engine runs on the loop).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

from shoal.clock import ManualClock

T = TypeVar("T")

DEADLINE_S = 300.0
"""Long enough for anything a test waits on (an action of a few real processes) on a machine
loaded several times over; a bug fails at the deadline rather than hanging the run."""

Describe = str | Callable[[], object]


def _failure(what: Describe, timeout_s: float, last: object) -> AssertionError:
    told = what() if callable(what) else what
    return AssertionError(f"{told or 'condition'} not met within {timeout_s:g}s (last: {last!r})")


def eventually(
    check: Callable[[], T],
    what: Describe = "",
    *,
    timeout_s: float = DEADLINE_S,
    every_s: float = 0.1,
) -> T:
    """Call `check` until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise _failure(what, timeout_s, result)
        time.sleep(every_s)


async def until(
    check: Callable[[], T | Awaitable[T]],
    what: Describe = "",
    *,
    timeout_s: float = DEADLINE_S,
    every_s: float = 0.02,
    clock: ManualClock | None = None,
    step_s: float = 0.5,
    in_thread: bool = False,
) -> T:
    """Await `check` until it returns something truthy; that value. With `clock`, the clock is
    moved on by `step_s` after each miss (the deadline stays in real time)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        got = await asyncio.to_thread(check) if in_thread else check()
        result = cast(T, await got if inspect.isawaitable(got) else got)
        if result:
            return result
        if loop.time() >= deadline:
            raise _failure(what, timeout_s, result)
        if clock is not None:
            clock.advance(step_s)
        await asyncio.sleep(every_s)

"""A provider call's time limit (issue 23: shared per-second timers, not one per call)."""

from __future__ import annotations

import asyncio

import pytest

from shoal.clock import SystemClock
from shoal.engine import nodework
from shoal.engine.nodework import RetryPolicy
from shoal.providers.errors import TemporaryError


async def test_a_call_that_never_answers_fails_after_its_tries() -> None:
    tries = 0

    async def hang() -> str:
        nonlocal tries
        tries += 1
        await asyncio.Event().wait()
        return "never"

    policy = RetryPolicy(attempts=2, backoff_s=0.0, call_timeout_s=0.05)
    with pytest.raises(TemporaryError, match=r"did not answer within 0\.05 s"):
        await nodework._with_retries(hang, policy, SystemClock(), ("sim", "create_server"))
    assert tries == 2


async def test_calls_that_answer_leave_no_deadline_behind() -> None:
    async def answer(k: int) -> int:
        await asyncio.sleep(0)
        return k

    policy = RetryPolicy(attempts=1, call_timeout_s=600.0)
    got = await asyncio.gather(
        *(
            nodework._with_retries(lambda k=k: answer(k), policy, SystemClock(), ("sim", "x"))
            for k in range(50)
        )
    )
    assert got == list(range(50))
    assert all(not calls for calls in nodework._deadlines().due.values())


async def test_a_cancel_from_outside_is_not_a_timeout() -> None:
    """The task cancelled by someone else while its call runs: CancelledError, no retry, and
    the task's `cancelling()` count is that cancel's alone."""
    started = asyncio.Event()
    tries = 0

    async def hang() -> str:
        nonlocal tries
        tries += 1
        started.set()
        await asyncio.Event().wait()
        return "never"

    policy = RetryPolicy(attempts=3, backoff_s=0.0, call_timeout_s=600.0)
    task = asyncio.create_task(
        nodework._with_retries(hang, policy, SystemClock(), ("sim", "create_server"))
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tries == 1 and task.cancelling() == 1
    assert all(not calls for calls in nodework._deadlines().due.values())


async def test_deadlines_follow_the_running_loop() -> None:
    """The last loop's deadlines are kept for speed; a new loop gets its own."""
    here = nodework._deadlines()
    assert here.loop is asyncio.get_running_loop() and nodework._deadlines() is here

    def other() -> nodework._Deadlines:
        async def ask() -> nodework._Deadlines:
            return nodework._deadlines()

        return asyncio.run(ask())

    there = await asyncio.to_thread(other)
    assert there is not here and there.loop is not here.loop
    assert nodework._deadlines() is here

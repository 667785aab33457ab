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

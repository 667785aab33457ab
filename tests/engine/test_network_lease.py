"""The lease of a cluster's networks (engine/netlease.py), on both databases, its time on a
`ManualClock`: a dead holder's lease is taken over once its ttl ran out, never before; a live
holder keeps it by renewing, however long it works; it is gone as soon as the holder is done."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from shoal.clock import ManualClock
from shoal.engine.netlease import NetworkLease, lease_name
from shoal.store import leases
from shoal.store.database import Database


class Sleeps(ManualClock):
    """A ManualClock that says when something sleeps on it, so a test moves time only once the
    lease waits on it (a sleep that starts after the move would wait for ever)."""

    def __init__(self) -> None:
        super().__init__()
        self.sleeping: asyncio.Queue[float] = asyncio.Queue()

    async def sleep(self, seconds: float) -> None:
        self.sleeping.put_nowait(seconds)
        await super().sleep(seconds)


class Attempts:
    """`run_in_thread` for a lease that reports each acquisition's answer, so a test waits for
    the lease's next try instead of sleeping and hoping it tried."""

    def __init__(self) -> None:
        self.answers: asyncio.Queue[object] = asyncio.Queue()

    def __call__(self, fn: Callable[[], Any], /) -> Awaitable[Any]:
        async def run() -> Any:
            answer = await asyncio.to_thread(fn)
            await self.answers.put(answer)
            return answer

        return run()


async def test_a_dead_holders_lease_is_taken_over_once_its_ttl_ran_out(db: Database) -> None:
    clock = Sleeps()
    ttl = 30.0
    assert leases.acquire(db, lease_name("c1"), "dead-engine", clock.now(), ttl)
    attempts = Attempts()
    lease = NetworkLease(db, "engine-b", clock, ttl_s=ttl, poll_s=1.0, run_in_thread=attempts)
    entered = asyncio.Event()

    async def prepare() -> None:
        async with lease.held("c1") as mine:
            assert mine
            entered.set()

    task = asyncio.create_task(prepare())
    refused = 0
    while await attempts.answers.get() is False:
        assert not entered.is_set()
        refused += 1
        assert await clock.sleeping.get() == 1.0  # polls on its clock, no busy loop
        clock.advance(1.0)
    # Tried at 0, 1, ..., 30 s (the lease runs until 30 s inclusive), taken at 31 s.
    assert refused == 31
    await task
    assert entered.is_set()


async def test_a_slow_holder_keeps_its_lease_by_renewing_it_and_frees_it_when_done(
    db: Database,
) -> None:
    clock = Sleeps()
    attempts = Attempts()
    slow = NetworkLease(db, "engine-a", clock, ttl_s=30.0, run_in_thread=attempts)
    other = NetworkLease(db, "engine-b", clock, ttl_s=30.0)
    working, done = asyncio.Event(), asyncio.Event()

    async def prepare() -> None:
        async with slow.held("c1") as mine:
            assert mine
            working.set()
            await done.wait()

    task = asyncio.create_task(prepare())
    assert await attempts.answers.get() is True
    await working.wait()
    for _ in range(9):  # 90 s of work, three times the ttl
        assert await clock.sleeping.get() == 10.0  # the renewal waits a third of the ttl
        clock.advance(10.0)
        assert await attempts.answers.get() is True  # renewed
        async with other.held("c1", wait=False) as taken:
            assert not taken
    done.set()
    await task
    async with other.held("c1", wait=False) as taken:
        assert taken  # at once, not after the ttl

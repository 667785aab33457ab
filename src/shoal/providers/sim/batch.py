"""Reservations (and build ends) of one process's concurrent creates made together, in one
SQLite transaction.

An engine starts hundreds of creates in the same turn of its event loop; each reservation in
its own `BEGIN IMMEDIATE` paid a lock, a cold page cache (another process wrote since) and a
commit that writes every page its insert touched, most of the simulated cloud's CPU per node
(issue 23). Here the reservations asked for in one turn wait for the end of that turn and are
made in order in one transaction (`SqliteState.reserve_many`): the same checks of key, host
and capacity one after another, so what they decide does not change, and the transaction
holds the lock across processes as a single reservation did.
"""

from __future__ import annotations

import asyncio
import math
from time import thread_time

from shoal.model.inventory import Host
from shoal.providers.sim.metered import spent
from shoal.providers.sim.sqlite import SqliteState
from shoal.providers.sim.state import NoCapacityError, SimRecord

Reserved = tuple[SimRecord, bool]


class Reservations:
    """Reservations gathered over one turn of the running loop (see the module docstring)."""

    def __init__(self, state: SqliteState) -> None:
        self._state = state
        self._pending: list[tuple[SimRecord, Host, asyncio.Future[Reserved]]] = []

    def reserve(self, record: SimRecord, host: Host) -> asyncio.Future[Reserved]:
        """The reservation's outcome once made, or NoCapacityError; a future cancelled before
        then reserves nothing."""
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[Reserved] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((record, host, outcome))
        return outcome

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        wanted = [(r, h, f) for r, h, f in pending if not f.cancelled()]
        if not wanted:
            return
        t = thread_time()
        try:
            outcomes = self._state.reserve_many([(r, h) for r, h, _ in wanted])
        except Exception as e:  # the transaction failed (e.g. the lock timed out): all do
            for _, _, f in wanted:
                f.set_exception(e)
            return
        finally:
            spent("reserve", t)
        for (_, _, f), outcome in zip(wanted, outcomes, strict=True):
            if isinstance(outcome, NoCapacityError):
                f.set_exception(outcome)
            else:
                f.set_result(outcome)


Finished = tuple[bool, frozenset[str]]
"""A build's end: whether its record was still there (and is now ACTIVE), and the failed hosts."""


class Builds:
    """Builds of one process that end in the same tick (`TICK_S`) of the loop's clock, finished
    together: one timer, one transaction marking them ACTIVE and one read of the failed hosts.

    Issue 23: each create's latency `sleep` (a timer pushed through the heap's Python
    comparisons), its own `set_state` (an autocommit write: a lock and a commit) and its own
    read of the failed hosts, each metered, were about a quarter of an engine's Python per node
    between the claim and the outcome. A build now ends up to `TICK_S` later than its latency;
    a future cancelled before its tick marks nothing, as a cancelled sleep did."""

    TICK_S = 0.005

    def __init__(self, state: SqliteState) -> None:
        self._state = state
        self._loop: asyncio.AbstractEventLoop | None = None
        self._due: dict[int, list[tuple[str, asyncio.Future[Finished]]]] = {}

    def finish(self, resource_id: str, after_s: float) -> asyncio.Future[Finished]:
        """Mark `resource_id` ACTIVE `after_s` from now (rounded up to a tick)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new loop: the old one's ticks will never fire
            self._loop, self._due = loop, {}
        outcome: asyncio.Future[Finished] = loop.create_future()
        tick = math.ceil((loop.time() + after_s) / self.TICK_S)
        due = self._due.get(tick)
        if due is None:
            due = self._due[tick] = []
            loop.call_at(tick * self.TICK_S, self._flush, tick)
        due.append((resource_id, outcome))
        return outcome

    def _flush(self, tick: int) -> None:
        wanted = [(i, f) for i, f in self._due.pop(tick, ()) if not f.cancelled()]
        if not wanted:
            return
        t = thread_time()
        try:
            changed, failed = self._state.finish_builds([i for i, _ in wanted])
        except Exception as e:  # the transaction failed (e.g. the lock timed out): all do
            for _, f in wanted:
                f.set_exception(e)
            return
        finally:
            spent("set_state", t)
        for (_, f), ok in zip(wanted, changed, strict=True):
            f.set_result((ok, failed))

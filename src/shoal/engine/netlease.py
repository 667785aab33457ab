"""One engine at a time makes a cluster's networks: a lease in the database per cluster.

Why: on `openstack` a server's ports need its cluster's networks, subnets, routers and
security groups first, and whoever finds them missing makes them (found again by tag after).
The driver's per-cluster `asyncio.Lock` serialises the creates of one process only; engines
sharing a database each split a new cluster's creates, each found no network at the same moment
and each made one: two of everything. So the engine makes sure of them (`NetworkPreparer`)
under the lease `networks:<cluster id>` (store/leases.py), held as the engine's owner id.

`NetworkLease.held` takes the cluster's in-process lock, then the lease: a caller that must
wait (a server's create) polls every `poll_s` on the engine's clock while another engine holds
it, then finds everything made by tag and makes nothing; one that need not (the manager's sync,
level-triggered) gives up at once and is asked again next tick. While the caller works, the
lease is renewed every `ttl_s / 3`, so a slow prepare (Neutron making routers) keeps it; an
engine that dies stops renewing, and after at most `ttl_s` a waiting engine takes the lease over
and prepares again (idempotent by tag: what the dead one made is adopted). The row is dropped
when the holder is done, so clusters leave no rows behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol, TypeVar

from shoal.clock import Clock
from shoal.store import leases
from shoal.store.database import Database

log = logging.getLogger("shoal.engine.netlease")

T = TypeVar("T")

TTL_S = 30.0
"""How long a dead holder keeps others waiting at most; renewed every 10 s by a live one (a
write per 10 s of prepare, which takes seconds), so a stall of 20 s still keeps it."""

POLL_S = 0.5
"""How often a waiting engine asks again: a prepare takes seconds, a poll is one write."""


def lease_name(cluster_id: str) -> str:
    return f"networks:{cluster_id}"


class Threads(Protocol):
    """How blocking database work leaves the event loop (`EngineContext.run_in_thread`)."""

    def __call__(self, fn: Callable[[], T], /) -> Awaitable[T]: ...


class NetworkLease:
    """The lease of each cluster's networks, as one holder (an engine, or a part of one that
    must not share its holding with the rest: see `NetworkSync`)."""

    def __init__(
        self,
        db: Database,
        holder: str,
        clock: Clock,
        *,
        ttl_s: float = TTL_S,
        poll_s: float = POLL_S,
        run_in_thread: Threads = asyncio.to_thread,
    ) -> None:
        self.db = db
        self.holder = holder
        self.clock = clock
        self.ttl_s = ttl_s
        self.poll_s = poll_s
        self._threads = run_in_thread
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        """Per cluster, its lock and how many callers use it now (dropped at zero). Two
        callers of one holder would both "acquire" the lease (a renewal), and the first to end
        would release it under the other: the lock keeps them one at a time."""

    @contextlib.asynccontextmanager
    async def held(self, cluster_id: str, *, wait: bool = True) -> AsyncIterator[bool]:
        """Hold cluster `cluster_id`'s lease for the body; True once held, False (only with
        `wait=False`) while another holder has it, then the body must leave the networks be."""
        lock = self._enter(cluster_id)
        try:
            async with lock:
                name = lease_name(cluster_id)
                while not await self._acquire(name):
                    if not wait:
                        yield False
                        return
                    await self.clock.sleep(self.poll_s)
                renewing = asyncio.create_task(self._renew(name))
                try:
                    yield True
                finally:
                    renewing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await renewing
                    await self._drop(name)
        finally:
            self._leave(cluster_id)

    async def _acquire(self, name: str) -> bool:
        db, holder, now, ttl = self.db, self.holder, self.clock.now(), self.ttl_s
        return await self._threads(functools.partial(leases.acquire, db, name, holder, now, ttl))

    async def _renew(self, name: str) -> None:
        while True:
            await self.clock.sleep(self.ttl_s / 3)
            try:
                if await self._acquire(name):
                    continue
            except Exception:  # the database away for a moment: the next renewal may do
                log.exception("renewing lease %s failed", name)
                continue
            # Renewed too late: another engine took it over and prepares too (by tag, so it
            # adopts what this one made; only what both make at once in between is doubled).
            log.warning("lease %s was taken over while %s still held it", name, self.holder)
            return

    async def _drop(self, name: str) -> None:
        try:
            await self._threads(functools.partial(leases.drop, self.db, name, self.holder))
        except Exception:  # it runs out by itself within ttl_s
            log.exception("releasing lease %s failed", name)

    def _enter(self, cluster_id: str) -> asyncio.Lock:
        lock, users = self._locks.get(cluster_id) or (asyncio.Lock(), 0)
        self._locks[cluster_id] = (lock, users + 1)
        return lock

    def _leave(self, cluster_id: str) -> None:
        lock, users = self._locks[cluster_id]
        if users <= 1:
            del self._locks[cluster_id]
        else:
            self._locks[cluster_id] = (lock, users - 1)

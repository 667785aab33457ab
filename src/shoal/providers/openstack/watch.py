"""Waiting for Nova servers to settle, at a cost Nova can afford for hundreds at once.

Nova's API, conductor and scheduler share their cores with the builds they run, so every poll
Shoal makes slows the boots it waits for. Measured on the test harness, a detailed listing
costs ~3.5 ms of Nova's time per server listed, a listing filtered to the servers still in
BUILD ~12 ms in all. So waiters share one cheap listing per interval,
`GET /servers?tags=shoal&status=BUILD` (ids only, single-flight: the first waiter to wake
fetches it, the rest read it), and a waiter asks for its own server in detail only when the
listing no longer shows it building, or when it was never in the listing (a reboot, a delete,
a build Nova has not listed yet), then backing off 1, 2, 4 intervals between asks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from shoal.providers.errors import TemporaryError
from shoal.providers.openstack.rest import Json, Rest

Sleep = Callable[[float], Awaitable[None]]

TAG = "shoal"
"""Every server Shoal makes carries this tag."""

_PAGE = 1000
_MAX_BACKOFF_POLLS = 4


async def list_servers(compute: Rest, query: str, what: str, *, detail: bool = True) -> list[Json]:
    """Every server matching `query` (e.g. "tags=shoal"), page by page."""
    out: list[Json] = []
    marker = ""
    path = "/servers/detail" if detail else "/servers"
    while True:
        page, _ = await compute.call("GET", f"{path}?{query}&limit={_PAGE}{marker}", what)
        servers = list(page.get("servers", []))
        out.extend(servers)
        if len(servers) < _PAGE:
            return out
        marker = f"&marker={servers[-1]['id']}"


class ServerWatch:
    """The ids of Shoal's servers still building, refreshed at most once per interval."""

    def __init__(self, compute: Rest, interval_s: float, sleep: Sleep = asyncio.sleep) -> None:
        self._compute = compute
        self.interval_s = interval_s
        self._sleep = sleep
        self._building: set[str] = set()
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()

    async def _refresh(self, not_before: float) -> None:
        async with self._lock:
            if self._fetched_at >= not_before:
                return
            started = time.monotonic()
            servers = await list_servers(
                self._compute, f"tags={TAG}&status=BUILD", "list building servers", detail=False
            )
            self._building = {str(s["id"]) for s in servers}
            self._fetched_at = started

    async def get(self, server_id: str, what: str) -> Json | None:
        """The server in detail, or None if Nova no longer has it (or lists it DELETED)."""
        body, _ = await self._compute.call(
            "GET", f"/servers/{server_id}", f"show {what}", missing_ok=True
        )
        server = body.get("server")
        if server is None or server.get("status") in ("DELETED", "SOFT_DELETED"):
            return None
        return dict(server)

    async def wait(
        self,
        server_id: str,
        what: str,
        settled: Callable[[Json | None], bool],
        timeout_s: float,
    ) -> Json | None:
        """The server once `settled(server)` holds (None: the server is gone)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        was_building = False
        backoff, skip = 1, 0
        last: Json | None = None
        while True:
            await self._sleep(self.interval_s)
            asked = time.monotonic()
            await self._refresh(not_before=asked - self.interval_s)
            building = server_id in self._building
            if building:
                was_building = True
                skip = 0
            elif was_building or skip <= 0:
                last = await self.get(server_id, what)
                if settled(last):
                    return last
                if was_building:
                    was_building = False
                    backoff = 1
                skip, backoff = backoff, min(backoff * 2, _MAX_BACKOFF_POLLS)
            else:
                skip -= 1
            if loop.time() >= deadline:
                status = last.get("status") if last else ("BUILD" if building else "unknown")
                raise TemporaryError(f"{what} is still {status} after {timeout_s:g} s")

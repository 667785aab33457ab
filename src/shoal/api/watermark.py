"""The newest event id, read once per poll interval for every held request together.

Each event stream and long poll used to query its project's events every 0.2 s, found or not:
500 open streams were 2,500 queries a second on the thread pool every other call waits on
(`GET /v1/clusters` p50 0.19 -> 3.0 s). Now they share one read of the newest id; a held request
queries its own events only when something newer than what it has seen exists.
"""

from __future__ import annotations

import asyncio

from starlette.concurrency import run_in_threadpool

from shoal.runtime import Runtime


class Watermark:
    """The newest event id, at most `max_age_s` old; concurrent askers share one read."""

    def __init__(self, runtime: Runtime, max_age_s: float) -> None:
        self.runtime = runtime
        self.max_age_s = max_age_s
        self._value = 0
        self._read_at = float("-inf")
        self._lock = asyncio.Lock()

    async def newest(self) -> int:
        loop = asyncio.get_running_loop()
        if loop.time() - self._read_at < self.max_age_s:
            return self._value
        async with self._lock:
            if loop.time() - self._read_at >= self.max_age_s:
                self._value = await run_in_threadpool(self.runtime.queries.newest_event_id)
                self._read_at = loop.time()
            return self._value

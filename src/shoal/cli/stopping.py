"""A `shoal server` that stops within `stop_grace_s` of SIGTERM, whatever it is doing.

uvicorn's graceful shutdown waits for every open connection to finish: an event stream or a
long poll never does, so a loaded server took 25 s to exit (and would wait forever without a
timeout). Here the stop is bounded three ways: streams and long polls see `app.state.stopping`
and end at once; what other requests are still running gets `DRAIN_SHARE` of the grace (then
uvicorn cancels them), the engine's provider calls as much again (then they are abandoned to
lease takeover, which is safe: creates are idempotent by node id); and a watchdog ends the
process at `stop_grace_s` if anything still holds it. Imported only when a server starts.

Two things measured at high load (500 streams, 500 long polls, 2,000 slowloris connections, a
create in flight, load 15 on 2 cores) ate the slack: uvicorn logged a full traceback for every
request it cancelled at the drain's end (hundreds, seconds of formatting on a busy machine,
and a log that read like a crash), so those are dropped and uvicorn's one "Cancel N running
task(s)" line stands for them; and the watchdog fired at the grace itself, so the exit (a
big process closing thousands of sockets) ended after it: it fires `EXIT_MARGIN` earlier.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from types import FrameType

import uvicorn

log = logging.getLogger("shoal.server")

DRAIN_SHARE = 0.4
"""The part of `stop_grace_s` open requests get to finish (and as much for the engine)."""

EXIT_MARGIN = 0.15
"""The part of `stop_grace_s` (at most `MAX_EXIT_MARGIN_S`) left for a forced exit to end."""
MAX_EXIT_MARGIN_S = 2.0


def _begin(stop: Callable[[], Awaitable[None]]) -> None:
    task = asyncio.ensure_future(stop())
    _BEGUN.add(task)
    task.add_done_callback(_BEGUN.discard)


_BEGUN: set[asyncio.Future[None]] = set()
"""Stops begun at SIGTERM (held so the loop does not drop them before they end)."""


class _CancelledAtStop(logging.Filter):
    """Drops uvicorn's "Exception in ASGI application" for a request it cancelled because the
    drain ran out (the stop is what ended it, not a fault), once the server is stopping."""

    def __init__(self, stopping: Callable[[], bool]) -> None:
        super().__init__()
        self.stopping = stopping

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, asyncio.CancelledError) and self.stopping())


class BoundedServer(uvicorn.Server):
    """uvicorn's server, telling the app it is stopping and holding a deadline to exit by."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        grace_s: float,
        on_forced_exit: Callable[[], None],
        on_stop: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(config)
        self.grace_s = grace_s
        self.on_forced_exit = on_forced_exit
        self.on_stop = on_stop
        """Begun on the loop at SIGTERM, beside the drain (the engine's stop): uvicorn would
        only call the app's lifespan after the drain, so the two shares added up."""
        self._watchdog: threading.Timer | None = None
        logging.getLogger("uvicorn.error").addFilter(_CancelledAtStop(lambda: self.should_exit))

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        state = getattr(self.config.app, "state", None)  # the FastAPI app's
        if state is not None:
            state.stopping = True
        if self._watchdog is None and self.on_stop is not None:
            with contextlib.suppress(RuntimeError):  # no loop yet: nothing to stop early
                loop = asyncio.get_running_loop()
                loop.call_soon_threadsafe(_begin, self.on_stop)
        if self._watchdog is None:  # a daemon: it holds the deadline up to the last thread's end
            log.info("stopping within stop_grace_s=%g s", self.grace_s)
            margin = min(self.grace_s * EXIT_MARGIN, MAX_EXIT_MARGIN_S)
            self._watchdog = threading.Timer(self.grace_s - margin, self._force)
            self._watchdog.daemon = True
            self._watchdog.start()
        super().handle_exit(sig, frame)

    def _force(self) -> None:
        log.warning(
            "still stopping near the end of stop_grace_s=%g s: exiting now "
            "(leases run out, safely)",
            self.grace_s,
        )
        try:
            self.on_forced_exit()
        finally:
            os._exit(0)

"""A `shoal server` that stops within `stop_grace_s` of SIGTERM, whatever it is doing.

uvicorn's graceful shutdown waits for every open connection to finish: an event stream or a
long poll never does, so a loaded server took 25 s to exit (and would wait forever without a
timeout). Here the stop is bounded three ways: streams and long polls see `app.state.stopping`
and end at once; what other requests are still running gets `DRAIN_SHARE` of the grace (then
uvicorn cancels them), the engine's provider calls as much again (then they are abandoned to
lease takeover, which is safe: creates are idempotent by node id); and a watchdog ends the
process at `stop_grace_s` if anything still holds it. Imported only when a server starts.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from types import FrameType

import uvicorn

log = logging.getLogger("shoal.server")

DRAIN_SHARE = 0.4
"""The part of `stop_grace_s` open requests get to finish (and as much for the engine)."""


class BoundedServer(uvicorn.Server):
    """uvicorn's server, telling the app it is stopping and holding a deadline to exit by."""

    def __init__(
        self, config: uvicorn.Config, *, grace_s: float, on_forced_exit: Callable[[], None]
    ) -> None:
        super().__init__(config)
        self.grace_s = grace_s
        self.on_forced_exit = on_forced_exit
        self._watchdog: threading.Timer | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        state = getattr(self.config.app, "state", None)  # the FastAPI app's
        if state is not None:
            state.stopping = True
        if self._watchdog is None:  # a daemon: it holds the deadline up to the last thread's end
            log.info("stopping within stop_grace_s=%g s", self.grace_s)
            self._watchdog = threading.Timer(self.grace_s, self._force)
            self._watchdog.daemon = True
            self._watchdog.start()
        super().handle_exit(sig, frame)

    def _force(self) -> None:
        log.warning(
            "still stopping after stop_grace_s=%g s: exiting now (leases run out, safely)",
            self.grace_s,
        )
        try:
            self.on_forced_exit()
        finally:
            os._exit(0)

"""A deadline for a request's headers: slowloris connections are closed, not kept forever.

uvicorn (h11) times out only an idle keep-alive connection after a response; a client that
opens a connection and sends its headers a byte at a time (or never finishes them) holds a
socket and a protocol object for as long as it likes: 2,000 such connections stayed open. This
protocol gives every request's headers `header_timeout_s` from the connection (or the end of
the previous response) to arrive whole, then closes the connection. Bodies have their own
deadline in the app (`api/limits.py`). Imported only when a server starts.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline (`header_timeout_s`, set by `with_timeout`)."""

    header_timeout_s = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # between requests, or a request's headers still coming: the clock runs
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # the keep-alive timer watches the idle connection from here

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _expired(self) -> None:
        self._header_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def with_timeout(seconds: float) -> type[HeaderTimeoutProtocol]:
    """The protocol class to give uvicorn (`Config(http=...)`) for this deadline."""
    return type("HeaderTimeout", (HeaderTimeoutProtocol,), {"header_timeout_s": seconds})

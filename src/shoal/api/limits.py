"""Refusing request bodies over the size limit before they are read into memory, and bodies
that take longer than `timeout_s` to arrive (a slow body holds a connection and a task: 408).

Headers have their own deadline where the server reads them (`cli/header_timeout.py`).
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shoal.api.errors import error_body


class BodyLimit:
    """ASGI middleware: 413 when Content-Length, or the bytes actually sent, exceed `limit`;
    408 when the body is not whole `timeout_s` after the app first asks for it."""

    def __init__(self, app: ASGIApp, limit: int, timeout_s: float | None = None) -> None:
        self.app = app
        self.limit = limit
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._refuse(send)
                return
        seen = 0
        too_big = too_slow = whole = False
        deadline: float | None = None

        async def counting() -> Message:
            nonlocal seen, too_big, too_slow, whole, deadline
            if whole or self.timeout_s is None:
                # Once the body is read, receive() waits for the client to leave: no deadline.
                message = await receive()
            else:
                loop = asyncio.get_running_loop()
                if deadline is None:
                    deadline = loop.time() + self.timeout_s
                try:
                    async with asyncio.timeout_at(deadline):
                        message = await receive()
                except TimeoutError:
                    too_slow = True
                    raise _TooSlow from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                whole = not message.get("more_body", False)
                if seen > self.limit:
                    too_big = True
                    raise _TooLarge
            return message

        started = refused = False

        async def sending(message: Message) -> None:
            # FastAPI turns an exception while reading a typed body into its own 400; once the
            # limit is passed, whatever the app answers is replaced by the 413.
            nonlocal started, refused
            if not (too_big or too_slow) or started:
                started = True
                await send(message)
            elif not refused:
                refused = True
                await self._refuse(send, too_slow)

        try:
            await self.app(scope, counting, sending)
        except (_TooLarge, _TooSlow):
            if not started and not refused:
                refused = True
                await self._refuse(send, too_slow)

    async def _refuse(self, send: Send, too_slow: bool = False) -> None:
        if too_slow:
            status, text = 408, f"the request body did not arrive within {self.timeout_s:g} s"
        else:
            status, text = 413, f"request bodies are limited to {self.limit} bytes"
        body = json.dumps(error_body(status, text)).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        if too_slow:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


class _TooSlow(Exception):
    pass

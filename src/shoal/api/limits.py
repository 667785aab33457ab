"""Refusing request bodies over the size limit before they are read into memory."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shoal.api.errors import error_body


class BodyLimit:
    """ASGI middleware: 413 when Content-Length, or the bytes actually sent, exceed `limit`."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._refuse(send)
                return
        seen = 0
        too_big = False

        async def counting() -> Message:
            nonlocal seen, too_big
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    too_big = True
                    raise _TooLarge
            return message

        started = refused = False

        async def sending(message: Message) -> None:
            # FastAPI turns an exception while reading a typed body into its own 400; once the
            # limit is passed, whatever the app answers is replaced by the 413.
            nonlocal started, refused
            if not too_big or started:
                started = True
                await send(message)
            elif not refused:
                refused = True
                await self._refuse(send)

        try:
            await self.app(scope, counting, sending)
        except _TooLarge:
            if not started and not refused:
                refused = True
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            error_body(413, f"request bodies are limited to {self.limit} bytes")
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass

"""Every response carries `X-Openstack-Request-Id: req-<uuid>` (issue 27), like
oslo.middleware's request_id: a caller's valid id is kept, anything else replaced by a new one.

A plain ASGI middleware (not Starlette's BaseHTTPMiddleware), so the id it binds in the context
variable is the one the route, the service (which stores it on actions and events) and their
log lines see, and errors answered by inner middleware (401, 413) carry the header too.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shoal.telemetry import requestid

_HEADER = requestid.HEADER.lower().encode()


class RequestId:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next(
            (v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == _HEADER),
            None,
        )
        rid = given if given is not None and requestid.valid(given) else requestid.new()

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[requestid.HEADER] = rid
            await send(message)

        with requestid.bound(rid):
            await self.app(scope, receive, stamped)

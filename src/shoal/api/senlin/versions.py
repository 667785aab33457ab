"""API versions and microversions, as Senlin negotiated them.

`GET /clustering/` answers 300 with the versions document and `GET /clustering/v1` the version
itself, both without a token (clients discover versions first). Under `/v1`, the
`OpenStack-API-Version: clustering X.Y` header (or `latest`) picks the microversion; none means
1.0. A malformed one answers 400, one outside 1.0..1.14 answers 406, and every other answer
echoes the version with `Vary: OpenStack-API-Version`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shoal.api.senlin.errors import senlin_body

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 14)
HEADER = "OpenStack-API-Version"
SERVICE = "clustering"
_STATE_KEY = "clustering_version"
_VERSION = re.compile(r"^([1-9]\d*)\.([1-9]\d*|0)$")


def text(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def version_info(href: str) -> dict[str, Any]:
    return {
        "id": "1.0",
        "status": "CURRENT",
        "updated": "2016-01-18T00:00:00Z",
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.clustering-v1+json"}
        ],
        "links": [
            {"rel": "self", "href": href},
            {"rel": "help", "href": "https://docs.openstack.org/api-ref/clustering"},
        ],
        "min_version": text(MIN_VERSION),
        "max_version": text(MAX_VERSION),
    }


def v1_href(request: Request) -> str:
    root = request.scope.get("root_path", "")
    return str(request.url.replace(path=f"{root}/v1/", query=""))


class VersionError(Exception):
    def __init__(self, status: int, message: str, kind: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind


def requested(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The clustering entry of OpenStack-API-Version headers ("clustering 1.5, compute 2.1")."""
    for name, value in headers:
        if name.decode("latin-1").lower() != HEADER.lower():
            continue
        for entry in value.decode("latin-1").split(","):
            service, _, version = entry.strip().partition(" ")
            if service.lower() == SERVICE:
                return version.strip()
    return None


def negotiate(raw: str | None) -> tuple[int, int]:
    if raw is None:
        return MIN_VERSION
    if raw.lower() == "latest":
        return MAX_VERSION
    m = _VERSION.match(raw)
    if m is None:
        raise VersionError(
            400,
            f"API Version String '{raw}' is of invalid format. It must be of format 'major.minor'.",
            "InvalidAPIVersionString",
        )
    wanted = (int(m.group(1)), int(m.group(2)))
    if not MIN_VERSION <= wanted <= MAX_VERSION:
        raise VersionError(
            406,
            f"Version '{raw}' is not supported by the API. Minimum is "
            f"'{text(MIN_VERSION)}' and maximum is '{text(MAX_VERSION)}'.",
            "InvalidGlobalAPIVersion",
        )
    return wanted


def version_of(request: Request) -> tuple[int, int]:
    """The microversion this request negotiated (1.0 outside /v1)."""
    found = request.scope.get("state", {}).get(_STATE_KEY)
    return found if isinstance(found, tuple) else MIN_VERSION


def route_path(scope: Scope) -> str:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class Microversions:
    """ASGI middleware: negotiate the microversion of /v1 requests and echo it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = route_path(scope)
        if scope["type"] != "http" or not (path == "/v1" or path.startswith("/v1/")):
            await self.app(scope, receive, send)
            return
        try:
            version = negotiate(requested(scope.get("headers", [])))
        except VersionError as e:
            await _refuse(send, e)
            return
        scope.setdefault("state", {})[_STATE_KEY] = version
        echo = [
            (HEADER.encode(), f"{SERVICE} {text(version)}".encode()),
            (b"vary", HEADER.encode()),
        ]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *echo]
            await send(message)

        await self.app(scope, receive, sending)


async def _refuse(send: Send, e: VersionError) -> None:
    body = json.dumps(senlin_body(e.status, e.message, e.kind)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": e.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

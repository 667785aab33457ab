"""One client for both modes, so commands never care where Shoal runs.

- remote: plain `httpx` to `--url`, with a bearer token;
- embedded: `Runtime.open(Settings())` in this process and the API app behind an
  `httpx.ASGITransport`, with the admin token. No server runs the engine then, so a command that
  waits for an action asks for `engine=True` and the engine runs in-process until the command
  ends; the runtime is closed on the way out. The local provider's node processes are detached
  and keep running after the command exits.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from shoal.cli.errors import EXIT_INVALID, ApiError, CliError, Unreachable
from shoal.cli.options import Target
from shoal.settings import Settings

if TYPE_CHECKING:
    from shoal.runtime import Runtime

EMBEDDED_BASE = "http://shoal"
TIMEOUT = httpx.Timeout(60.0, connect=10.0)
"""Generous reads: events long-poll up to `wait` seconds."""


class Reply(NamedTuple):
    status: int
    body: Any
    headers: httpx.Headers


class ShoalClient:
    """Requests to Shoal's HTTP API; `call` raises `ApiError` on an error answer."""

    def __init__(self, http: httpx.AsyncClient, *, where: str, runtime: Runtime | None = None):
        self.http = http
        self.where = where
        self.runtime = runtime

    @property
    def embedded(self) -> bool:
        return self.runtime is not None

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        content: bytes | str | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            r = await self.http.request(
                method, path, json=json, content=content, params=clean, headers=headers
            )
        except httpx.TransportError as e:
            raise Unreachable(self.where, str(e) or type(e).__name__) from None
        return Reply(r.status_code, _body(r), r.headers)

    async def call(self, method: str, path: str, **kw: Any) -> Any:
        """The answer's body; an error answer raises `ApiError`."""
        reply = await self.request(method, path, **kw)
        if reply.status >= 400:
            raise ApiError.from_reply(reply.status, reply.body, method, path)
        return reply.body

    async def get(self, path: str, **params: Any) -> Any:
        return await self.call("GET", path, params=params)


def seg(value: str) -> str:
    """A user-given name or id as one URL path segment."""
    return quote(value, safe="")


def _body(r: httpx.Response) -> Any:
    if not r.content:
        return None
    try:
        return jsonlib.loads(r.content)
    except ValueError:
        return r.text


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()
        )
        raise CliError(f"invalid Shoal settings: {problems}", EXIT_INVALID) from None


@asynccontextmanager
async def connect(where: Target, *, engine: bool = False) -> AsyncIterator[ShoalClient]:
    """A client for `where`; embedded, with the engine running while it is open if `engine`."""
    settings = load_settings()
    url = where.url or settings.url
    if url:
        token = where.token or settings.token or _token_file(settings)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(
            base_url=url.rstrip("/"), headers=headers, timeout=TIMEOUT
        ) as http:
            yield ShoalClient(http, where=url)
        return
    async with _embedded(settings, engine) as client:
        yield client


@asynccontextmanager
async def _embedded(settings: Settings, engine: bool) -> AsyncIterator[ShoalClient]:
    from shoal.api.app import create_app
    from shoal.runtime import Runtime

    try:
        runtime = await Runtime.open(settings)
    except ValueError as e:  # an unknown provider or provider option, said in the user's words
        raise CliError(str(e), EXIT_INVALID) from None
    try:
        token = runtime.admin_token()
        app = create_app(runtime)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url=EMBEDDED_BASE, headers=headers, timeout=TIMEOUT
        ) as http:
            if engine:
                await runtime.engine.start()
            yield ShoalClient(http, where=f"embedded Shoal in {settings.home}", runtime=runtime)
    finally:
        await runtime.close()


def _token_file(settings: Settings) -> str | None:
    """The admin token a server on this machine wrote into the same home, if there is one."""
    try:
        return (settings.home / "admin-token").read_text().strip() or None
    except OSError:
        return None

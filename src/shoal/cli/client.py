"""One client for both modes, so commands never care where Shoal runs.

- remote: HTTP (http.py) to `--url` / `SHOAL_URL`, with a bearer token;
- the default: the background Shoal of `SHOAL_HOME` (started on first use, see background.py),
  over loopback HTTP with the admin token it wrote into the home. Its engine and manager run
  in that server, so an action goes on (and the cluster stays managed) whatever happens to the
  command that asked for it.

pydantic is imported only by a server (`load_settings`); a client command stays light.
"""

from __future__ import annotations

import json as jsonlib
from typing import TYPE_CHECKING, Any, NamedTuple

from shoal.cli import background
from shoal.cli.errors import EXIT_INVALID, ApiError, CliError, Unreachable
from shoal.cli.http import HttpClient, Response, TransportError
from shoal.cli.options import Target
from shoal.cli.where import where as find_where

if TYPE_CHECKING:
    from shoal.settings import Settings

READ_TIMEOUT_S, CONNECT_TIMEOUT_S = 60.0, 10.0
"""Generous reads: events long-poll up to `wait` seconds."""


class Reply(NamedTuple):
    status: int
    body: Any
    headers: dict[str, str]


class ShoalClient:
    """Requests to Shoal's HTTP API; `call` raises `ApiError` on an error answer.

    `embedded`: the server is this home's background Shoal, not one named by `--url`.
    """

    def __init__(self, http: HttpClient, *, where: str, embedded: bool = False):
        self.http = http
        self.where = where
        self.embedded = embedded

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
        except TransportError as e:
            raise Unreachable(self.where, str(e)) from None
        return Reply(r.status, _body(r), r.headers)

    async def call(self, method: str, path: str, **kw: Any) -> Any:
        """The answer's body; an error answer raises `ApiError`."""
        reply = await self.request(method, path, **kw)
        if reply.status >= 400:
            raise ApiError.from_reply(reply.status, reply.body, method, path)
        return reply.body

    async def get(self, path: str, **params: Any) -> Any:
        return await self.call("GET", path, params=params)


def _body(r: Response) -> Any:
    if not r.content:
        return None
    if r.headers.get("content-type", "").startswith("text/plain"):
        return r.text  # a node's log: text, even when a line of it looks like JSON
    try:
        return jsonlib.loads(r.content)
    except ValueError:
        return r.text


def load_settings() -> Settings:
    """Every setting, for a server (client commands need only `where.where()`)."""
    from pydantic import ValidationError

    from shoal.settings import Settings

    try:
        return Settings()
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()
        )
        raise CliError(f"invalid Shoal settings: {problems}", EXIT_INVALID) from None


def open_client(where: Target) -> ShoalClient:
    """A client for `where` (starting this home's background Shoal if it is not running)."""
    found = find_where()
    url = where.url or found.url
    embedded = not url
    if not url:
        url = background.ensure(found.home).url
        token = where.token or _token_file(found)
        shown = f"the background Shoal of {found.home} ({url})"
    else:
        token = where.token or found.token or _token_file(found)
        shown = url
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        http = HttpClient(
            url,
            headers=headers,
            read_timeout=READ_TIMEOUT_S,
            connect_timeout=CONNECT_TIMEOUT_S,
        )
    except ValueError as e:
        raise CliError(f"--url / SHOAL_URL: {e}", EXIT_INVALID) from None
    return ShoalClient(http, where=shown, embedded=embedded)


def _token_file(found: Any) -> str | None:
    """The admin token a server on this machine wrote into the same home, if there is one."""
    try:
        return str((found.home / "admin-token").read_text().strip()) or None
    except OSError:
        return None

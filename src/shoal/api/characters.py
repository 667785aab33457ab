"""Refusing characters no store can hold before any of the request reaches one.

PostgreSQL text cannot hold NUL (U+0000), and a lone UTF-16 surrogate (`"\\ud800"` in JSON or
YAML) is no character at all: UTF-8 cannot encode it, so SQLite's driver, PostgreSQL's driver and
the JSON encoder of an error echoing it all failed, and the request answered 500. No Shoal name,
id, token or document has a use for either, so one in the path or the query, or escaped in the
body (`\\u0000`, a `\\ud800` without its pair), answers 400 in the error shape, naming where.
The body is read whole (the body limit, outside this middleware, bounds it) and handed on
unchanged. The Senlin and Heat façades answer in their own shapes and check their own requests.
"""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shoal.api.errors import error_body

# An escape (JSON or YAML) after an even number of backslashes: an escaped backslash followed
# by the text "u0000" is text, not an escape.
_ESC = rb"(?<!\\)(?:\\\\)*\\"
# Only the \u forms: `\0` and `\x00` are escapes in YAML's double-quoted strings only, and
# ordinary text in the block scalars scripts live in.
_ESCAPED_NUL = re.compile(_ESC + rb"(?:u0000|U00000000)")
_SURROGATE_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_ESCAPED_SURROGATE = re.compile(_ESC + rb"(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_text(text: str) -> bool:
    """Whether a path or a decoded query holds a NUL or a lone surrogate."""
    return _UNSTORABLE.search(text) is not None


def unstorable_body(body: bytes) -> bool:
    """Whether the body holds an escaped NUL or lone surrogate. (A raw NUL is left to the
    parsers: JSON and YAML both refuse it, as a 422 on the document.)"""
    if b"\\" not in body:
        return False
    if _ESCAPED_NUL.search(body):
        return True
    return _ESCAPED_SURROGATE.search(_SURROGATE_PAIR.sub(b"", body)) is not None


class RefuseUnstorable:
    """ASGI middleware: 400 when the path, query or body holds a NUL or a lone surrogate;
    requests under a `skip` prefix pass untouched, under a `body_unchecked` one with their body
    unread."""

    def __init__(
        self, app: ASGIApp, skip: tuple[str, ...] = (), body_unchecked: tuple[str, ...] = ()
    ) -> None:
        self.app = app
        self.skip = skip
        self.body_unchecked = body_unchecked
        """Prefixes whose path and query are checked but whose body is the route's to clean
        (agents' signals: a script's stdout may hold a NUL, and losing the run's result for it
        would be worse; model/heat_agent.py replaces them)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.skip):
            await self.app(scope, receive, send)
            return
        if _UNSTORABLE.search(scope["path"]):
            await _refuse(send, "path", "the URL path")
            return
        query = unquote(scope.get("query_string", b"").decode("latin-1"), errors="surrogatepass")
        if _UNSTORABLE.search(query):
            await _refuse(send, "query", "the query string")
            return
        if scope["path"].startswith(self.body_unchecked):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        last: Message = {"type": "http.request", "body": b"", "more_body": True}
        while last.get("more_body", False):
            last = await receive()
            if last["type"] != "http.request":
                break  # the client left; the app will see it
            chunks.append(last.get("body", b""))
        body = b"".join(chunks)
        if unstorable_body(body):
            await _refuse(send, "", "the body")
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            if last["type"] != "http.request":
                return last
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _refuse(send: Send, where: str, what: str) -> None:
    problem = {"path": where, "message": "NUL (U+0000) and lone surrogates are not allowed"}
    payload = json.dumps(
        error_body(400, f"{what} holds a character that cannot be stored", [problem])
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})

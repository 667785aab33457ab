"""A small HTTP/1.1 client on asyncio streams: the CLI's only way to talk to Shoal.

httpx (with httpcore, anyio and h11) costs a client command more start-up time than the whole
command may take; the CLI needs one request at a time to one server, JSON in and out, plain
or TLS. Each request opens its own connection (`Connection: close`, loopback is cheap) and is
cancelled cleanly by Ctrl-C, since it is nothing but asyncio streams.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

USER_AGENT = "shoal-cli"


class TransportError(Exception):
    """The server could not be reached, or did not answer in time, or answered nonsense."""


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    headers: dict[str, str]
    """Lower-case names."""
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class HttpClient:
    """Requests to one server at `base_url`, with `headers` on each."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: dict[str, str] | None = None,
        read_timeout: float = 60.0,
        connect_timeout: float = 10.0,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._netloc = parts.netloc
        self._prefix = parts.path.rstrip("/")
        self._headers = dict(headers or {})
        self._read_timeout = read_timeout
        self._connect_timeout = connect_timeout

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | str | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = b""
        sent = {"Host": self._netloc, "User-Agent": USER_AGENT, "Accept": "application/json"}
        sent.update(self._headers)
        if json is not None:
            body = jsonlib.dumps(json).encode()
            sent["Content-Type"] = "application/json"
        elif content is not None:
            body = content.encode() if isinstance(content, str) else content
        sent.update(headers or {})
        sent["Content-Length"] = str(len(body))
        sent["Connection"] = "close"
        target = self._prefix + path
        if params:
            query = urlencode({k: _param(v) for k, v in params.items()}, doseq=True)
            target += ("&" if "?" in target else "?") + query
        head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in sent.items())
        try:
            reader, writer = await asyncio.wait_for(self._open(), self._connect_timeout)
        except TimeoutError:
            raise TransportError(f"no connection within {self._connect_timeout:g}s") from None
        except OSError as e:
            raise TransportError(e.strerror or str(e) or type(e).__name__) from None
        try:
            writer.write(head.encode("latin-1") + b"\r\n" + body)
            await writer.drain()
            return await asyncio.wait_for(_read(reader), self._read_timeout)
        except TimeoutError:
            raise TransportError(f"no answer within {self._read_timeout:g}s") from None
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            raise TransportError(str(e) or type(e).__name__) from None
        finally:
            writer.close()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._tls:
            import ssl

            ctx = ssl.create_default_context()
            return await asyncio.open_connection(self._host, self._port, ssl=ctx)
        return await asyncio.open_connection(self._host, self._port)


def _param(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


async def _read(reader: asyncio.StreamReader) -> Response:
    status_line = (await reader.readline()).decode("latin-1")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError(f"not an HTTP answer: {status_line.strip()!r}")
    status = int(parts[1])
    headers: dict[str, str] = {}
    while True:
        line = (await reader.readline()).decode("latin-1")
        if line in ("\r\n", "\n", ""):
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        content = await _chunks(reader)
    elif "content-length" in headers:
        content = await reader.readexactly(int(headers["content-length"]))
    else:
        content = await reader.read()
    return Response(status, headers, content)


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        size = int((await reader.readline()).split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return bytes(out)
        out += await reader.readexactly(size)
        await reader.readline()

"""Calls to OpenStack's REST APIs through openstacksdk, off the event loop, as Shoal's errors.

openstacksdk gives Shoal authentication, the service catalog, endpoint overrides and
microversion headers; the calls themselves are plain REST through its service proxies, because
Shoal needs request bodies the resource classes don't offer (a forced host, tags at boot) and
one listing for many waiters. openstacksdk is synchronous, so every call runs in a thread pool
of its own, sized for the concurrency the engine asks of the provider.

Vendor failures become `shoal.providers.errors`: unreachable or 5xx → `TemporaryError`, 404 →
`ResourceGone`, quota and bad requests → `PermanentError`, always keeping the service's own
message as the fault.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from keystoneauth1 import exceptions as ks_exceptions
from openstack import exceptions as sdk_exceptions

from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.telemetry import requestid

Json = dict[str, Any]


def fault_of(body: bytes | str) -> str:
    """The message of an OpenStack error body (`{"itemNotFound": {"message": ...}}` and kin,
    Neutron's `{"NeutronError": {"message": ...}}`, Octavia's `{"faultstring": ...}`)."""
    try:
        doc = json.loads(body or b"{}")
    except ValueError:
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
        return " ".join(text.split())[:500]
    if isinstance(doc, dict):
        for value in doc.values():
            if isinstance(value, dict) and "message" in value:
                return str(value["message"])
        if "message" in doc:
            return str(doc["message"])
        if "faultstring" in doc:  # Octavia (pecan/WSME)
            return str(doc["faultstring"])
    return json.dumps(doc)[:500]


def error_for(status: int, what: str, fault: str) -> Exception:
    """Shoal's error for an HTTP failure of `what` (e.g. "create server web-1")."""
    lowered = fault.lower()
    if status == 404:
        return ResourceGone(f"{what}: not found", fault=fault)
    if "quota" in lowered or status == 413:
        return PermanentError(f"{what}: quota exceeded", fault=fault)
    if status in (408, 429, 503, 504) or status >= 500:
        return TemporaryError(f"{what}: the service answered {status}", fault=fault)
    if status == 409:
        # Usually the resource is busy with another task (a build, a reboot): worth retrying.
        return TemporaryError(f"{what}: conflict", fault=fault)
    if status in (401, 403):
        return PermanentError(f"{what}: not allowed ({status})", fault=fault)
    return PermanentError(f"{what}: rejected ({status})", fault=fault)


class Rest:
    """One OpenStack service (compute, block-storage or image) reached through a proxy."""

    def __init__(
        self,
        proxy: Callable[[], Any],
        executor: ThreadPoolExecutor,
        *,
        microversion: str | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        self._proxy = proxy
        self._executor = executor
        self.microversion = microversion
        self.timeout_s = timeout_s

    async def call(
        self,
        method: str,
        path: str,
        what: str,
        *,
        body: Json | None = None,
        microversion: str | None = None,
        missing_ok: bool = False,
    ) -> tuple[Json, dict[str, str]]:
        """The decoded body and headers of a successful call (`{}` for an empty body).

        `missing_ok`: a 404 answers `({}, {})` instead of raising `ResourceGone`.
        """
        mv = microversion or self.microversion
        # Issue 27: the request this work serves, as the service's global request id, so its
        # log names the request an operator follows from Shoal's (read here: the executor's
        # thread does not see the caller's context).
        serving = requestid.get()
        headers = {requestid.GLOBAL_HEADER: serving} if serving is not None else None

        def blocking() -> tuple[int, bytes, dict[str, str]]:
            kwargs: dict[str, Any] = {"timeout": self.timeout_s, "raise_exc": False}
            if body is not None:
                kwargs["json"] = body
            if mv is not None:
                kwargs["microversion"] = mv
            if headers:
                kwargs["headers"] = headers
            response = self._proxy().request(path, method, **kwargs)
            return response.status_code, response.content, dict(response.headers)

        status, content, got = await self._send(blocking, what)
        if status == 404 and missing_ok:
            return {}, got
        if status >= 400:
            raise error_for(status, what, fault_of(content))
        if not content:
            return {}, got
        try:
            decoded = json.loads(content)
        except ValueError as e:
            raise TemporaryError(f"{what}: the answer is not JSON", fault=str(e)) from e
        return (decoded if isinstance(decoded, dict) else {"value": decoded}), got

    async def _send(
        self, blocking: Callable[[], tuple[int, bytes, dict[str, str]]], what: str
    ) -> tuple[int, bytes, dict[str, str]]:
        """Run the call in the worker pool; the SDK's transport failures as Shoal's errors."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, blocking)
        except (ks_exceptions.ConnectFailure, ks_exceptions.ConnectTimeout) as e:
            raise TemporaryError(f"{what}: cannot reach the service", fault=str(e)) from e
        except ks_exceptions.RequestTimeout as e:
            raise TemporaryError(
                f"{what}: no answer within {self.timeout_s:g} s", fault=str(e)
            ) from e
        except ks_exceptions.EndpointNotFound as e:
            raise PermanentError(f"{what}: the cloud offers no such service", fault=str(e)) from e
        except ks_exceptions.ClientException as e:
            raise TemporaryError(f"{what}: {type(e).__name__}", fault=str(e)) from e
        except sdk_exceptions.SDKException as e:
            # Configuration, not luck: no such service in the catalog, no endpoint, bad auth.
            raise PermanentError(f"{what}: {e}", fault=str(e)) from e

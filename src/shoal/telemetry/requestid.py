"""Request ids, OpenStack's way: `req-<uuid>`, carried from the API into the work it causes.

The API sets the id of the request it serves in a context variable (`current`); the service
stores it on the actions and events it records, and the engine sets it again while it works on
such an action, so every log line of that work carries it (`LogFilter`) and the OpenStack
provider passes it to Nova and Cinder as their global request id (`X-OpenStack-Request-ID`).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

HEADER = "X-Openstack-Request-Id"
"""The response header (oslo.middleware's spelling) and the caller's header it accepts."""
GLOBAL_HEADER = "X-OpenStack-Request-ID"
"""What a caller sends to another service so that service logs it as the global request id."""

_PATTERN = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

current: ContextVar[str | None] = ContextVar("shoal_request_id", default=None)


def new() -> str:
    return f"req-{uuid.uuid4()}"


def valid(value: str | None) -> bool:
    """Whether `value` is a request id a caller may hand us (oslo.context's own check)."""
    return value is not None and _PATTERN.match(value) is not None


def get() -> str | None:
    return current.get()


@contextmanager
def bound(request_id: str | None) -> Iterator[None]:
    """Run a block of work on behalf of `request_id` (None: none)."""
    token = current.set(request_id)
    try:
        yield
    finally:
        current.reset(token)


class LogFilter(logging.Filter):
    """Puts the current request id on every log record (`record.request_id`, "-" if none).

    Installed on handlers, so every line of the work a request caused carries its id, in the
    API's thread, in the engine's tasks and in the threads they hand database work to
    (`asyncio.to_thread` copies the context)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current.get() or "-"
        return True

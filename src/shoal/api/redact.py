"""Keeping secrets in URLs out of the access log.

A receiver's webhook URL carries its secret in the query (`?token=…`, native and Senlin), and
uvicorn's access log prints every request's path with its query. The filter rewrites the value
of any query parameter whose name suggests a secret before the record is formatted.
"""

from __future__ import annotations

import logging
import re

ACCESS_LOGGER = "uvicorn.access"
MASK = "***"

_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:[^=&;#\s]*?)(?:token|secret|password|passwd|signature|key)[^=&;#\s]*=)"
    r"(?P<value>[^&;#\s]*)",
    re.IGNORECASE,
)


def redact_url(text: str) -> str:
    """`text` with the values of secret-looking query parameters masked."""
    return _SECRET_PARAM.sub(lambda m: m.group("name") + MASK, text)


class RedactSecrets(logging.Filter):
    """Masks secrets in a log record's message and string arguments; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_url(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_url(a) if isinstance(a, str) else a for a in record.args)
        return True


def install(logger_name: str = ACCESS_LOGGER) -> None:
    """Add the filter to the logger once (creating an app twice must not stack filters)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, RedactSecrets) for f in logger.filters):
        logger.addFilter(RedactSecrets())

"""The server's own log: the engine's and manager's work (recoveries, failed actions), as text or
JSON lines, next to uvicorn's access lines.

Without a handler, the `shoal.*` loggers would print only warnings, unformatted; a background
Shoal's log (`$SHOAL_HOME/server.log`) is where a user looks when a cluster heals itself.
"""

from __future__ import annotations

import json
import logging
import time
from enum import StrEnum

from shoal.telemetry import requestid


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message (and the error, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure(level: str, fmt: LogFormat) -> None:
    """Send the `shoal` loggers to stderr at `level` (uvicorn's level names)."""
    handler = logging.StreamHandler()
    if fmt is LogFormat.JSON:
        handler.setFormatter(JsonLines())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s")
        )
    handler.addFilter(requestid.LogFilter())  # issue 27: the request each line's work serves
    logger = logging.getLogger("shoal")
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper() if level.upper() in logging.getLevelNamesMapping() else "INFO")
    logger.propagate = False

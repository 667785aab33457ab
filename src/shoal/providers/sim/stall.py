"""A simulated cloud whose calls hang (issue 39, item 4): a runtime stopped mid-call.

`kill -STOP` of podman leaves every call into it waiting, without an error, until `kill -CONT`.
The sim's `hang_path` option does the same to its server, container and network calls: while
that file exists, each call waits (and an engine's time limit, if it has one, cancels it); when
the file goes, the calls carry on. `benchmarks/chaos.py`'s `hangs` scenario makes and removes it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

POLL_S = 0.1


class Stall:
    """Hangs calls while `path` exists (never, without one)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path

    async def wait(self) -> None:
        path = self.path
        if path is None:
            return
        while path.exists():
            await asyncio.sleep(POLL_S)

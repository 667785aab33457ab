"""Exits of replicas' containers told as they happen (issue 36, item 5): the engine's keeper
restarts a replica's first exit at once, so what bounds a kill -> ready is how soon the exit is
seen. Polling `podman ps` faster would cost a podman process per server per poll; instead each
node's podman writes its events to a file (`events_logger = "file"`, podman.py), and conmon
appends a `died` event within tens of milliseconds of a container's end. This module watches
those files: a `stat` per server holding replicas every `period_s` (no process, no podman
call), and the lines added since the last look read only when a file grew. A `died` event of a
container labelled `shoal.replica` ends the wait; any other line (compose or Pod containers of
the same store, starts, removals) does not.

A file seen for the first time is read from its end: what happened before the watch began is
the keeper's regular look's business (`podman ps -a` each tick), not news.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

from shoal.providers.local.containers import EVENTS_NAME

PERIOD_S = 0.1
"""How often the files' sizes are looked at."""
STORES_EVERY_S = 1.0
"""How often the list of stores (servers holding replicas) is asked again."""
MAX_READ = 1 << 20
"""At most this much of a file's new lines read per look (the rest at the next)."""


class ExitWatch:
    """Waits for a replica container's `died` event in any of the stores `stores()` names."""

    def __init__(
        self,
        stores: Callable[[], list[Path]],
        label: str,
        period_s: float = PERIOD_S,
    ) -> None:
        self._stores = stores
        self._needle = f'"{label}"'.encode()
        self._period_s = period_s
        self._offsets: dict[Path, int] = {}
        self._listed: list[Path] = []
        self._listed_at = float("-inf")

    async def exited(self) -> None:
        """Return once a replica's container died since the last return (at once when one
        did meanwhile)."""
        while not self.look():
            await asyncio.sleep(self._period_s)

    def look(self) -> bool:
        """Whether some watched file tells of a replica container's death since the last look."""
        now = time.monotonic()
        if now - self._listed_at >= STORES_EVERY_S:
            self._listed = [root / EVENTS_NAME for root in self._stores()]
            self._listed_at = now
            for gone in set(self._offsets) - set(self._listed):
                del self._offsets[gone]
        died = False
        for path in self._listed:
            died = self._grew(path) or died
        return died

    def _grew(self, path: Path) -> bool:
        try:
            size = path.stat().st_size
        except OSError:
            return False
        seen = self._offsets.get(path)
        if seen is None or size < seen:  # new to the watch, or rotated: from its end
            self._offsets[path] = size
            return False
        if size == seen:
            return False
        try:
            with open(path, "rb") as f:
                f.seek(seen)
                added = f.read(min(size - seen, MAX_READ))
        except OSError:
            return False
        complete = added.rfind(b"\n") + 1
        if complete == 0 and len(added) == MAX_READ:  # one line longer than a read: skipped
            complete = len(added)
        self._offsets[path] = seen + complete
        return any(_replica_died(line, self._needle) for line in added[:complete].splitlines())


def _replica_died(line: bytes, needle: bytes) -> bool:
    if b'"died"' not in line or needle not in line:
        return False
    try:
        event = json.loads(line)
    except ValueError:
        return False
    attributes = event.get("Attributes") if isinstance(event, dict) else None
    return (
        event.get("Status") == "died"
        and event.get("Type") == "container"
        and isinstance(attributes, dict)
        and needle.decode().strip('"') in attributes
    )

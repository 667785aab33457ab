"""Which local hosts are down: a host-loss drill marks one failed, and that survives a restart.

A failed host disappears from `inventory()`, refuses creates, and its resources read MISSING
until it is recovered. The set is one small JSON file in the provider's home, re-read whenever
it changed on disk, so a host failed by another Shoal process on the same home is seen at once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from shoal.providers.local.records import write_atomic


class FailedHosts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._failed: frozenset[str] = frozenset()
        self.current()

    def __contains__(self, host: object) -> bool:
        return host in self.current()

    def current(self) -> frozenset[str]:
        """The failed hosts now: one stat, and a read only when the file changed."""
        try:
            st = os.stat(self.path)
        except OSError:
            self._stamp, self._failed = None, frozenset()
            return self._failed
        stamp = (st.st_ino, st.st_mtime_ns)
        if stamp != self._stamp:
            self._stamp, self._failed = stamp, frozenset(self._read())
        return self._failed

    def mark(self, host: str, failed: bool) -> None:
        hosts = self._read()
        if (host in hosts) == failed:
            return
        if failed:
            hosts.add(host)
        else:
            hosts.discard(host)
        write_atomic(self.path, json.dumps(sorted(hosts)))
        self._stamp = None

    def _read(self) -> set[str]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return set()
        return {h for h in data if isinstance(h, str)} if isinstance(data, list) else set()

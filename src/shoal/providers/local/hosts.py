"""Which local hosts are down: a host-loss demo marks one failed, and that survives a restart.

A failed host disappears from `inventory()`, refuses creates, and its resources read MISSING
until it is recovered. The set is one small JSON file in the provider's home.
"""

from __future__ import annotations

import json
from pathlib import Path

from shoal.providers.local.records import write_atomic


class FailedHosts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._failed = self._read()

    def __contains__(self, host: object) -> bool:
        return host in self._failed

    def mark(self, host: str, failed: bool) -> None:
        self._failed = self._read()
        if failed:
            self._failed.add(host)
        else:
            self._failed.discard(host)
        write_atomic(self.path, json.dumps(sorted(self._failed)))

    def _read(self) -> set[str]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return set()
        return {h for h in data if isinstance(h, str)} if isinstance(data, list) else set()

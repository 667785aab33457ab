"""Whose network a process is in (issue 39): a local node's own namespace, named in its record."""

from __future__ import annotations

import json
import os
from pathlib import Path


def node_namespace(home: Path, physical_id: str) -> Path:
    """The network namespace the local provider under `home` (a Shoal home) gave a server."""
    for path in (home / "local" / "resources").glob("server-*.json"):
        data = json.loads(path.read_text())
        if data["id"] == physical_id:
            assert data.get("netns"), f"server {physical_id} has no namespace of its own"
            return Path("/run/netns") / str(data["netns"])
    raise AssertionError(f"no record of server {physical_id}")


def in_namespace(pid: int, namespace: Path) -> bool:
    """Whether process `pid` runs in that network namespace."""
    mine, theirs = os.stat(f"/proc/{pid}/ns/net"), os.stat(namespace)
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)

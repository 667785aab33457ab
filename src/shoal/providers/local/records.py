"""What the local provider remembers: one JSON file per resource, written atomically.

Files live under `home/resources/`, named by kind and the request key, so a create with a known
key finds its resource with one file read, and a new provider on the same home (a Shoal restart)
re-adopts everything by reading the directory. Writes go through a temp file and `os.replace`,
so a crash never leaves half a record.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shoal.files import private_dir, write_private
from shoal.model.enums import NodeKind

_SAFE_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(slots=True)
class ServerRecord:
    """A local server: where it runs, what it runs, and the process that runs it."""

    id: str
    key: str
    name: str
    cluster: str
    host: str
    zone: str
    image: str
    address: str
    port: int
    slot: int
    workdir: str
    argv: list[str]
    health_path: str
    created_at: float
    pid: int | None = None
    started_at: float | None = None
    flavor: str = ""
    metadata_url: str | None = None
    """Where the server's agent chain polls for deployments; None: no agents (agents.py)."""
    agent_pid: int | None = None
    netns: str | None = None
    """The node's own network namespace (netns.py); None: it shares the host's network."""
    veth: str | None = None
    """The host's end of its veth pair."""
    mac: str | None = None
    kind: str = NodeKind.SERVER.value


@dataclass(slots=True)
class VolumeRecord:
    """A local volume: a directory with a budget, attached to at most one server."""

    id: str
    key: str
    name: str
    cluster: str
    host: str
    zone: str
    size_gb: int
    volume_type: str
    path: str
    created_at: float
    attached_to: str | None = None
    kind: str = NodeKind.VOLUME.value


Record = ServerRecord | VolumeRecord


def file_name(kind: NodeKind, key: str) -> str:
    """`<kind>-<key>.json`, or a digest of the key when it is not a safe file name."""
    slug = key if _SAFE_KEY.fullmatch(key) else hashlib.sha256(key.encode()).hexdigest()
    return f"{kind.value}-{slug}.json"


def write_atomic(path: Path, text: str) -> None:
    write_private(path, text)


class RecordStore:
    """Reads and writes resource records under one directory; ids are indexed on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        private_dir(root)
        self._by_id: dict[str, Path] = {}

    def path_for(self, kind: NodeKind, key: str) -> Path:
        return self.root / file_name(kind, key)

    def save(self, record: Record) -> None:
        path = self.path_for(NodeKind(record.kind), record.key)
        write_atomic(path, json.dumps(asdict(record), indent=1, sort_keys=True))
        self._by_id[record.id] = path

    def by_key(self, kind: NodeKind, key: str) -> Record | None:
        record = _load(self.path_for(kind, key))
        if record is not None:
            self._by_id[record.id] = self.path_for(kind, key)
        return record

    def by_id(self, resource_id: str) -> Record | None:
        path = self._by_id.get(resource_id)
        record = _load(path) if path is not None else None
        if record is not None and record.id == resource_id:
            return record
        self._by_id.pop(resource_id, None)
        for record in self.all():  # refreshes the index: another provider may have written it
            if record.id == resource_id:
                return record
        return None

    def all(self) -> list[Record]:
        out: list[Record] = []
        for path in sorted(self.root.glob("*.json")):
            record = _load(path)
            if record is not None:
                self._by_id[record.id] = path
                out.append(record)
        return out

    def remove(self, record: Record) -> None:
        self.path_for(NodeKind(record.kind), record.key).unlink(missing_ok=True)
        self._by_id.pop(record.id, None)


def _load(path: Path) -> Record | None:
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if data.get("kind") == NodeKind.SERVER.value:
        return ServerRecord(**data)
    if data.get("kind") == NodeKind.VOLUME.value:
        return VolumeRecord(**data)
    return None

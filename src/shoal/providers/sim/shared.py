"""The sim's containers and networking kept in the cloud's shared SQLite file (issue 39, item 4).

A real replica runtime and a real network outlive the engine that asked for them: a container
podman started keeps running after `kill -9` of the Shoal process, and a balancer Octavia made
keeps its members. Kept in each process's memory (the default, without `state_path`), a killed
engine's containers and balancers vanished with it, so the chaos benchmark could neither leave
one behind nor see one twice. With `state_path`, they live beside the servers in the file every
engine shares, so an engine's crash leaves them as a real cloud would, and `benchmarks/chaos.py`
counts a container or a balancer member no row accounts for.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

_SCHEMA = """
CREATE TABLE IF NOT EXISTS containers (
    key TEXT PRIMARY KEY,
    server_id TEXT NOT NULL,
    revision TEXT NOT NULL,
    exited INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS networks (
    cluster TEXT PRIMARY KEY,
    balancers TEXT NOT NULL
);
"""


@dataclass(slots=True)
class Container:
    server_id: str
    revision: str
    exited: bool = False


class ContainerBook(Protocol):
    """Containers by key."""

    def get(self, key: str) -> Container | None: ...

    def put(self, key: str, container: Container) -> None: ...

    def pop(self, key: str) -> None: ...

    def exit(self, key: str) -> None: ...

    def items(self) -> list[tuple[str, Container]]:
        """Every container held, by key (a snapshot)."""
        ...


class NetworkBook(Protocol):
    """Per cluster, each balancer's member names as last applied."""

    def put(self, cluster: str, balancers: dict[str, list[str]]) -> None: ...

    def pop(self, cluster: str) -> None: ...

    def clusters(self) -> set[str]: ...


class MemoryContainers:
    def __init__(self) -> None:
        self._held: dict[str, Container] = {}

    def get(self, key: str) -> Container | None:
        return self._held.get(key)

    def put(self, key: str, container: Container) -> None:
        self._held[key] = container

    def pop(self, key: str) -> None:
        self._held.pop(key, None)

    def exit(self, key: str) -> None:
        c = self._held.get(key)
        if c is not None:
            c.exited = True

    def items(self) -> list[tuple[str, Container]]:
        return list(self._held.items())


class MemoryNetworks:
    def __init__(self) -> None:
        self._held: dict[str, dict[str, list[str]]] = {}

    def put(self, cluster: str, balancers: dict[str, list[str]]) -> None:
        self._held[cluster] = balancers

    def pop(self, cluster: str) -> None:
        self._held.pop(cluster, None)

    def clusters(self) -> set[str]:
        return set(self._held)


class SharedBooks:
    """Both books in the cloud's file (a connection of their own; WAL, as `SqliteState`)."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)

    # -- containers ----------------------------------------------------------------------------

    def get(self, key: str) -> Container | None:
        row = self._db.execute(
            "SELECT server_id, revision, exited FROM containers WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else Container(str(row[0]), str(row[1]), bool(row[2]))

    def put(self, key: str, container: Container) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO containers (key, server_id, revision, exited) "
            "VALUES (?, ?, ?, ?)",
            (key, container.server_id, container.revision, int(container.exited)),
        )

    def pop(self, key: str) -> None:
        self._db.execute("DELETE FROM containers WHERE key = ?", (key,))

    def exit(self, key: str) -> None:
        self._db.execute("UPDATE containers SET exited = 1 WHERE key = ?", (key,))

    def items(self) -> list[tuple[str, Container]]:
        rows = self._db.execute("SELECT key, server_id, revision, exited FROM containers")
        return [(str(k), Container(str(s), str(r), bool(e))) for k, s, r, e in rows]

    # -- networks ------------------------------------------------------------------------------

    def put_networks(self, cluster: str, balancers: dict[str, list[str]]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO networks (cluster, balancers) VALUES (?, ?)",
            (cluster, json.dumps(balancers, sort_keys=True)),
        )

    def pop_networks(self, cluster: str) -> None:
        self._db.execute("DELETE FROM networks WHERE cluster = ?", (cluster,))

    def network_clusters(self) -> set[str]:
        return {str(c) for (c,) in self._db.execute("SELECT cluster FROM networks")}

    def networks(self) -> NetworkBook:
        return _SharedNetworks(self)


class _SharedNetworks:
    def __init__(self, books: SharedBooks) -> None:
        self._books = books

    def put(self, cluster: str, balancers: dict[str, list[str]]) -> None:
        self._books.put_networks(cluster, balancers)

    def pop(self, cluster: str) -> None:
        self._books.pop_networks(cluster)

    def clusters(self) -> set[str]:
        return self._books.network_clusters()

"""The part of a provider that runs workloads' replicas (issue 22): start one on a server,
ask whether it still runs, stop it. Optional, like `HostAdmin`: a provider without it runs no
replicas (the engine's keeper leaves their rows as placed, not ready).

A replica is named by `key` (cluster id / replica name), so asking twice never starts two.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable


class ReplicaState(StrEnum):
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    """Its container ended (crashed or killed); the server it was on is still there."""
    LOST = "LOST"
    """Never started, stopped, or its server (or the server's host) is gone."""


@runtime_checkable
class ReplicaRuntime(Protocol):
    async def start_replica(self, key: str, server_id: str) -> None:
        """Start (or start again) the replica's container on the server `server_id`; raises
        `ResourceGone` when that server is not running."""

    async def replica_states(self, keys: list[str]) -> dict[str, ReplicaState]:
        """What each replica is doing now, in one call (10,000 replicas per tick)."""

    async def stop_replica(self, key: str) -> None:
        """Stop and forget it (already gone is fine)."""

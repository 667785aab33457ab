"""What a change writes beside the cluster's document, named as data.

An edit (`service/edits.py`) is pure: it returns the new document and, as values of the types
here, the rows the change needs written in the same transaction (nodes joining or leaving the
cluster, when a node group last scaled, when a receiver fired). `ClusterService` performs them
after the change is admitted and before its action is recorded: one transaction, all or
nothing. Being values, effects can be compared in tests and read in a debugger, which the
closures they replace could not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import receivers as receiver_repo
from shoal.store.database import Connection
from shoal.store.records import ClusterRecord, NodeChange


class Effect(Protocol):
    """A write a change needs beside its document, performed in the change's transaction; it
    may refuse the change by raising (a name taken meanwhile)."""

    def perform(self, conn: Connection, cluster: ClusterRecord, now: float) -> None: ...


@dataclass(frozen=True, slots=True)
class JoinNodes:
    """Standalone nodes become members of the cluster, each an instance named as its node
    (which takes that name, when it is not its own already), so planning finds them made."""

    node_ids: tuple[str, ...]
    names: tuple[str, ...]

    def perform(self, conn: Connection, cluster: ClusterRecord, now: float) -> None:
        node_repo.update_nodes(
            conn,
            [
                NodeChange(i, now, cluster_id=cluster.id, group_name=n, name=n)
                for i, n in zip(self.node_ids, self.names, strict=True)
            ],
        )


@dataclass(frozen=True, slots=True)
class LeaveNodes:
    """Members leave the cluster and stay, standalone."""

    node_ids: tuple[str, ...]
    names: tuple[str, ...] = ()
    """The name each takes back (default: the one it has)."""

    def perform(self, conn: Connection, cluster: ClusterRecord, now: float) -> None:
        if self.names:
            changes = [
                NodeChange(i, now, cluster_id=None, group_name="", name=n)
                for i, n in zip(self.node_ids, self.names, strict=True)
            ]
        else:
            changes = [NodeChange(i, now, cluster_id=None, group_name="") for i in self.node_ids]
        node_repo.update_nodes(conn, changes)


@dataclass(frozen=True, slots=True)
class ScaledAt:
    """The time a node group was scaled by a trigger (its cooldown starts then)."""

    group: str

    def perform(self, conn: Connection, cluster: ClusterRecord, now: float) -> None:
        cluster_repo.set_scaled_at(conn, cluster.id, {**cluster.scaled_at, self.group: now})


@dataclass(frozen=True, slots=True)
class Triggered:
    """The time a receiver last fired."""

    receiver_id: str

    def perform(self, conn: Connection, cluster: ClusterRecord, now: float) -> None:
        receiver_repo.mark_triggered(conn, self.receiver_id, now)

"""The simulated cloud's state: records, per-host usage and failed hosts, behind one interface.

Two implementations share it: `MemoryState` (fast, one process) and `SqliteState` (a small
SQLite file several Shoal processes can share). Reserving is one atomic step that checks the
key, the host and its free capacity and takes an address slot, so two creates can never both
take the last room on a host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shoal.model.inventory import Host
from shoal.model.nodes import Demand

BUILDING = "BUILDING"
ACTIVE = "ACTIVE"
ERROR = "ERROR"


@dataclass(slots=True)
class SimRecord:
    """One simulated server or volume; `slot` numbers a server's address on its host."""

    id: str
    kind: str
    key: str
    name: str
    cluster: str
    host: str
    zone: str
    state: str
    demand: Demand
    slot: int | None = None
    attached_to: str | None = None
    flavor: str = ""
    image: str = ""


class NoCapacityError(Exception):
    """The host has no room for the demand, or is down."""


class SimState(Protocol):
    def by_key(self, kind: str, key: str) -> SimRecord | None: ...

    def by_id(self, resource_id: str) -> SimRecord | None: ...

    def reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        """Insert `record` (taking capacity and, for servers, a slot) unless its key exists.

        Returns the stored record and whether it is new; raises NoCapacityError."""
        ...

    def set_state(self, resource_id: str, state: str) -> bool:
        """Whether the record exists (and now has `state`)."""
        ...

    def rebuild(
        self, resource_id: str, host: Host, demand: Demand, flavor: str, image: str
    ) -> SimRecord | None:
        """Give a record a new demand, flavor and image and mark it BUILDING, in one step that
        checks the host still has room for the new demand beside everything else on it.

        Returns the updated record (None if it is gone); raises NoCapacityError."""
        ...

    def set_attached(self, resource_id: str, server_id: str | None) -> None: ...

    def remove(self, resource_id: str) -> SimRecord | None:
        """Delete a record, freeing its capacity and slot and detaching what it held."""
        ...

    def records(self, cluster: str | None = None) -> list[SimRecord]: ...

    def copies(self, kind: str, key: str) -> list[SimRecord]:
        """Records of `kind` whose stored key is `key` or `key` + `#` + a copy's suffix (real-cloud
        mode's search by the client's key): an index range, not a scan of the cluster, which at
        100,000 servers made every create read them all."""
        ...

    def failed_hosts(self) -> set[str]: ...

    def mark_host(self, host: str, failed: bool) -> list[str]:
        """Mark a host down (its servers go to ERROR, reading MISSING while it is down) or
        back up. Returns the ids of every resource on the host. O(resources on the host)."""
        ...

    def host_counts(self) -> dict[str, int]:
        """Host name -> how many resources it holds (hosts holding none are left out)."""
        ...

    def changes_since(self, cursor: int | None) -> tuple[int, frozenset[str] | None]:
        """The clusters whose resources changed (made, changed, removed, or their host failed
        or came back) after `cursor`, and the cursor now; None for the clusters when it cannot
        tell (no cursor yet, or one older than what it keeps): then take every one as changed.
        """
        ...

    def close(self) -> None: ...


def fits(host: Host, used: Demand, demand: Demand) -> str | None:
    """None if `demand` fits on `host` next to `used`, else what runs short."""
    for what, have, cap in (
        ("vcpus", used.vcpus + demand.vcpus, host.vcpus),
        ("ram", used.ram_mb + demand.ram_mb, host.ram_mb),
        ("disk", used.disk_gb + demand.disk_gb, host.disk_gb),
        ("volume storage", used.volume_gb + demand.volume_gb, host.volume_gb),
    ):
        if have > cap:
            return f"host {host.name} has not enough {what} ({have} needed of {cap})"
    return None


def minus(a: Demand, b: Demand) -> Demand:
    return Demand(
        a.vcpus - b.vcpus, a.ram_mb - b.ram_mb, a.disk_gb - b.disk_gb, a.volume_gb - b.volume_gb
    )

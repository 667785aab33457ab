"""The simulated cloud held in memory: dictionaries and counters, fast enough for 10,000s.

Every operation is O(1) apart from listing, so the sim's own overhead stays far below the
engine's when measuring at scale.
"""

from __future__ import annotations

import heapq

from shoal.model.inventory import Host
from shoal.model.nodes import Demand
from shoal.providers.sim.state import BUILDING, ERROR, NoCapacityError, SimRecord, fits, minus

FIRST_SLOT = 2


class MemoryState:
    def __init__(self) -> None:
        self._by_id: dict[str, SimRecord] = {}
        self._by_key: dict[tuple[str, str], SimRecord] = {}
        self._used: dict[str, Demand] = {}
        self._next_slot: dict[str, int] = {}
        self._free_slots: dict[str, list[int]] = {}
        self._failed: set[str] = set()
        self._volumes_of: dict[str, set[str]] = {}
        """Server id -> ids of the volumes attached to it."""
        self._on_host: dict[str, dict[str, None]] = {}
        """Host name -> ids of the resources on it, in creation order."""
        self._seq = 0
        self._changed: dict[str, int] = {}
        """Cluster -> the change counter at its last change (`changes_since`)."""

    def _touch(self, cluster: str) -> None:
        self._seq += 1
        self._changed[cluster] = self._seq

    def changes_since(self, cursor: int | None) -> tuple[int, frozenset[str] | None]:
        if cursor is None:
            return self._seq, None
        return self._seq, frozenset(c for c, s in self._changed.items() if s > cursor)

    def by_key(self, kind: str, key: str) -> SimRecord | None:
        return self._by_key.get((kind, key))

    def by_id(self, resource_id: str) -> SimRecord | None:
        return self._by_id.get(resource_id)

    def reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        existing = self._by_key.get((record.kind, record.key))
        if existing is not None:
            return existing, False
        if host.name in self._failed:
            raise NoCapacityError(f"host {host.name} is down")
        used = self._used.get(host.name, Demand())
        short = fits(host, used, record.demand)
        if short is not None:
            raise NoCapacityError(short)
        self._used[host.name] = used + record.demand
        if record.kind == "server":
            record.slot = self._take_slot(host.name)
        self._by_id[record.id] = record
        self._by_key[(record.kind, record.key)] = record
        self._on_host.setdefault(host.name, {})[record.id] = None
        self._touch(record.cluster)
        return record, True

    def _take_slot(self, host: str) -> int:
        free = self._free_slots.get(host)
        if free:
            return heapq.heappop(free)
        slot = self._next_slot.get(host, FIRST_SLOT)
        self._next_slot[host] = slot + 1
        return slot

    def set_state(self, resource_id: str, state: str) -> bool:
        record = self._by_id.get(resource_id)
        if record is not None:
            record.state = state
            self._touch(record.cluster)
        return record is not None

    def rebuild(
        self, resource_id: str, host: Host, demand: Demand, flavor: str, image: str
    ) -> SimRecord | None:
        record = self._by_id.get(resource_id)
        if record is None:
            return None
        others = minus(self._used.get(host.name, Demand()), record.demand)
        short = fits(host, others, demand)
        if short is not None:
            raise NoCapacityError(short)
        self._used[host.name] = others + demand
        record.demand, record.flavor, record.image, record.state = demand, flavor, image, BUILDING
        self._touch(record.cluster)
        return record

    def set_attached(self, resource_id: str, server_id: str | None) -> None:
        record = self._by_id.get(resource_id)
        if record is None:
            return
        if record.attached_to is not None:
            self._volumes_of.get(record.attached_to, set()).discard(resource_id)
        record.attached_to = server_id
        self._touch(record.cluster)
        if server_id is not None:
            self._volumes_of.setdefault(server_id, set()).add(resource_id)

    def remove(self, resource_id: str) -> SimRecord | None:
        record = self._by_id.pop(resource_id, None)
        if record is None:
            return None
        self._touch(record.cluster)
        del self._by_key[(record.kind, record.key)]
        self._on_host.get(record.host, {}).pop(resource_id, None)
        self._used[record.host] = minus(self._used[record.host], record.demand)
        if record.slot is not None:
            heapq.heappush(self._free_slots.setdefault(record.host, []), record.slot)
        if record.attached_to is not None:
            self._volumes_of.get(record.attached_to, set()).discard(resource_id)
        for volume_id in self._volumes_of.pop(resource_id, set()):
            volume = self._by_id.get(volume_id)
            if volume is not None:
                volume.attached_to = None
        return record

    def records(self, cluster: str | None = None) -> list[SimRecord]:
        return [r for r in self._by_id.values() if cluster is None or r.cluster == cluster]

    def copies(self, kind: str, key: str) -> list[SimRecord]:
        return [
            r
            for r in self._by_id.values()
            if r.kind == kind and (r.key == key or r.key.startswith(key + "#"))
        ]

    def failed_hosts(self) -> set[str]:
        return set(self._failed)

    def mark_host(self, host: str, failed: bool) -> list[str]:
        ids = list(self._on_host.get(host, {}))
        for cluster in {self._by_id[i].cluster for i in ids}:
            self._touch(cluster)
        if not failed:
            self._failed.discard(host)
            return ids
        self._failed.add(host)
        for resource_id in ids:
            r = self._by_id[resource_id]
            if r.kind == "server":
                r.state = ERROR
        return ids

    def host_counts(self) -> dict[str, int]:
        return {host: len(ids) for host, ids in self._on_host.items() if ids}

    def close(self) -> None:
        pass

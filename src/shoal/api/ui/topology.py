"""The topology as the dashboard draws it: zones, their hosts, and the nodes on each host.

Pure: it takes hosts (with capacity and use, when the caller may see them) and the caller's
nodes, and returns typed records. Nodes the caller cannot see never reach it: the route asks
the service's queries, which scope every read to the caller's project.

Every host carries its nodes' count per status. Above the route's maximum of drawn nodes
(issue 23: a 100,000-node cluster) the nodes are not loaded at all: the counts, made in SQL,
are the view (`summarised`), and they are the same numbers the nodes would have given. Such a
view with more hosts than the route's maximum (12,500 sim hosts under a 100,000-node cluster:
2.8 MB) lists no host: each zone is one line of totals (`hosts_summarised`), so its size is
bounded by the zones, not the hosts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from shoal.model.nodes import Demand
from shoal.store.topology import HostCount


@dataclass(frozen=True, slots=True)
class Capacity:
    vcpus: int
    ram_mb: int
    disk_gb: int
    volume_gb: int


@dataclass(frozen=True, slots=True)
class HostFacts:
    """What the admin view knows of a host before any node is put on it."""

    name: str
    zone: str
    failed: bool
    capacity: Capacity | None
    used: Capacity | None


@dataclass(frozen=True, slots=True)
class NodeDot:
    id: str
    name: str
    cluster: str
    cluster_id: str
    group: str
    kind: str
    status: str
    address: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "cluster": self.cluster,
            "cluster_id": self.cluster_id,
            "group": self.group,
            "kind": self.kind,
            "status": self.status,
            "address": self.address,
        }


@dataclass(slots=True)
class HostView:
    name: str
    zone: str
    failed: bool
    capacity: Capacity | None
    used: Capacity | None
    nodes: list[NodeDot] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    """Status -> how many of its nodes (all of them, drawn or not)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "zone": self.zone,
            "failed": self.failed,
            "capacity": None if self.capacity is None else asdict(self.capacity),
            "used": None if self.used is None else asdict(self.used),
            "nodes": [n.as_dict() for n in self.nodes],
            "node_count": sum(self.counts.values()),
            "status_counts": dict(sorted(self.counts.items())),
        }


@dataclass(frozen=True, slots=True)
class ZoneSummary:
    """A zone's hosts as totals, in place of the hosts: how many, how many failed, their
    capacity and use summed (None when the caller sees none), its nodes per status."""

    hosts: int
    failed: int
    capacity: Capacity | None
    used: Capacity | None
    counts: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "host_count": self.hosts,
            "failed_hosts": self.failed,
            "capacity": None if self.capacity is None else asdict(self.capacity),
            "used": None if self.used is None else asdict(self.used),
            "node_count": sum(self.counts.values()),
            "status_counts": dict(sorted(self.counts.items())),
        }


@dataclass(slots=True)
class ZoneView:
    name: str
    hosts: list[HostView] = field(default_factory=list)
    summary: ZoneSummary | None = None
    """Set (and `hosts` empty) when the view has too many hosts to list."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "hosts": [h.as_dict() for h in self.hosts],
            "summary": None if self.summary is None else self.summary.as_dict(),
        }


@dataclass(slots=True)
class Topology:
    admin: bool
    zones: list[ZoneView]
    unplaced: list[NodeDot]
    """Nodes with no host yet (being created, or lost with theirs)."""
    total_nodes: int
    unplaced_counts: dict[str, int] = field(default_factory=dict)
    summarised: bool = False
    """Counts only: more nodes than `drawn_max` (no node is drawn, `unplaced` is empty)."""
    drawn_max: int | None = None
    hosts_summarised: bool = False
    """Zones as totals, no host listed: a summarised view with more hosts than `hosts_max`."""
    hosts_max: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape (written out: `dataclasses.asdict` is slow at 1,000 nodes)."""
        return {
            "admin": self.admin,
            "zones": [z.as_dict() for z in self.zones],
            "unplaced": [n.as_dict() for n in self.unplaced],
            "unplaced_counts": dict(sorted(self.unplaced_counts.items())),
            "total_nodes": self.total_nodes,
            "summarised": self.summarised,
            "drawn_max": self.drawn_max,
            "hosts_summarised": self.hosts_summarised,
            "hosts_max": self.hosts_max,
        }


def capacity_of(d: Demand) -> Capacity:
    return Capacity(d.vcpus, d.ram_mb, d.disk_gb, d.volume_gb)


def _natural(name: str) -> tuple[Any, ...]:
    """`host2` before `host10`."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _sum(a: Capacity | None, b: Capacity | None) -> Capacity | None:
    if a is None or b is None:
        return a or b
    return Capacity(
        a.vcpus + b.vcpus, a.ram_mb + b.ram_mb, a.disk_gb + b.disk_gb, a.volume_gb + b.volume_gb
    )


def _zone_totals(views: Iterable[HostView]) -> list[ZoneView]:
    """Each zone's hosts added up into one `ZoneSummary` (no host sorted or listed)."""
    per: dict[str, list[HostView]] = {}
    for v in views:
        per.setdefault(v.zone, []).append(v)
    zones = []
    for name in sorted(per, key=_natural):
        cap: Capacity | None = None
        used: Capacity | None = None
        counts: dict[str, int] = {}
        for v in per[name]:
            cap, used = _sum(cap, v.capacity), _sum(used, v.used)
            for status, n in v.counts.items():
                counts[status] = counts.get(status, 0) + n
        failed = sum(v.failed for v in per[name])
        zones.append(ZoneView(name, [], ZoneSummary(len(per[name]), failed, cap, used, counts)))
    return zones


def build(
    *,
    admin: bool,
    hosts: Iterable[HostFacts],
    nodes: Iterable[Mapping[str, Any]] | None,
    cluster_names: Mapping[str, str],
    counts: Iterable[HostCount] = (),
    drawn_max: int | None = None,
    hosts_max: int | None = None,
) -> Topology:
    """Zones -> hosts -> nodes. `hosts` are the known hosts (admin); a node on a host not among
    them (a tenant's view, or a host the provider no longer lists) brings its host along.
    With `nodes` None, `counts` (per host and status) stand for them: a summarised view; and
    with more hosts than `hosts_max` as well, each zone is its totals."""
    by_host: dict[str, HostView] = {
        h.name: HostView(h.name, h.zone, h.failed, h.capacity, h.used) for h in hosts
    }
    unplaced: list[NodeDot] = []
    unplaced_counts: dict[str, int] = {}
    total = 0
    summarised = nodes is None
    if nodes is None:
        for c in counts:
            total += c.count
            status = c.status.value
            if not c.host:
                unplaced_counts[status] = unplaced_counts.get(status, 0) + c.count
                continue
            view = by_host.get(c.host)
            if view is None:
                view = by_host[c.host] = HostView(c.host, c.zone or "?", False, None, None)
            view.counts[status] = view.counts.get(status, 0) + c.count
        if hosts_max is not None and len(by_host) > hosts_max:
            return Topology(
                admin=admin,
                zones=_zone_totals(by_host.values()),
                unplaced=[],
                total_nodes=total,
                unplaced_counts=unplaced_counts,
                summarised=True,
                drawn_max=drawn_max,
                hosts_summarised=True,
                hosts_max=hosts_max,
            )
        nodes = ()
    for n in nodes:
        total += 1
        dot = NodeDot(
            id=str(n["id"]),
            name=str(n["name"]),
            cluster=cluster_names.get(str(n["cluster_id"]), str(n["cluster_id"])[:8]),
            cluster_id=str(n["cluster_id"]),
            group=str(n.get("group") or ""),
            kind=str(n["kind"]),
            status=str(n["status"]),
            address=n.get("address"),
        )
        host = n.get("host")
        if not host:
            unplaced.append(dot)
            unplaced_counts[dot.status] = unplaced_counts.get(dot.status, 0) + 1
            continue
        view = by_host.get(host)
        if view is None:
            view = by_host[host] = HostView(host, str(n.get("zone") or "?"), False, None, None)
        view.nodes.append(dot)
        view.counts[dot.status] = view.counts.get(dot.status, 0) + 1
    zones: dict[str, ZoneView] = {}
    for view in sorted(by_host.values(), key=lambda v: _natural(v.name)):
        view.nodes.sort(key=lambda d: (d.cluster, _natural(d.name)))
        zones.setdefault(view.zone, ZoneView(view.zone)).hosts.append(view)
    return Topology(
        admin=admin,
        zones=[zones[z] for z in sorted(zones, key=_natural)],
        unplaced=sorted(unplaced, key=lambda d: (d.cluster, _natural(d.name))),
        total_nodes=total,
        unplaced_counts=unplaced_counts,
        summarised=summarised,
        drawn_max=drawn_max,
        hosts_max=hosts_max,
    )

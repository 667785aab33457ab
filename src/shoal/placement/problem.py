"""The placement problem in solver terms: items, constraints and what already exists.

A cluster becomes *items* (sets of nodes that must share a host: a unit replica, an instance,
or everything a hard host-affinity grouping ties together) and *constraints* (anti-affinity,
spread and the soft rules, counted per host or zone). Hard zone affinity ties items into *zone
blocks* that must share a zone. Building this once keeps the search loops free of names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from shoal.model.cluster import ClusterSpec, Grouping
from shoal.model.enums import Rule, Scope
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, NodeSpec, expand, member_units
from shoal.placement.rejection import Rejection, ruled_out_by

VCPU, RAM, DISK, VOL = 0, 1, 2, 3
RESOURCE_NAMES = ("vcpus", "ram_mb", "disk_gb", "volume_gb")


@dataclass(slots=True)
class Constraint:
    """A counted rule: anti-affinity, spread, or a soft rule, over hosts or zones."""

    index: int
    grouping: Grouping
    units: frozenset[str]
    domains: list[int]
    """Spread only: eligible domains (host or zone indexes) its skew is measured over."""
    domain_set: frozenset[int] = frozenset()
    rule: Rule = Rule.ANTI_AFFINITY
    by_host: bool = True
    limit: int = 1
    key: str = ""
    """Rule and scope, e.g. "anti-affinity@host": how items index their constraints."""
    rejection: Rejection = field(init=False)
    """What a filter answers when this (hard) rule rules a domain out; made once."""

    def __post_init__(self) -> None:
        g = self.grouping
        self.rejection = ruled_out_by(self.index, g.name)
        self.domain_set = frozenset(self.domains)
        self.rule = g.rule
        self.by_host = g.scope is Scope.HOST
        self.limit = g.max_skew if g.rule is Rule.SPREAD else g.max_per_domain
        self.key = rule_key(g.rule, g.scope)


def rule_key(rule: Rule, scope: Scope) -> str:
    return f"{rule}@{scope}"


@dataclass(slots=True)
class Item:
    """Nodes that go to one host together; only new nodes, existing ones are fixed."""

    index: int
    nodes: list[NodeSpec]
    demand: tuple[int, int, int, int]
    zones: frozenset[int] | None
    """Allowed zone indexes; None means any zone."""
    fixed_host: int | None
    block: int
    """Zone block (hard zone affinity) index, or -1."""
    memberships: list[tuple[int, int]] = field(default_factory=list)
    """(constraint index, how many of its member units this item holds)."""
    rules: dict[str, list[tuple[Constraint, int]]] = field(default_factory=dict)
    """The same memberships by `Constraint.key`, so each filter reads only its own rule."""

    def label(self) -> str:
        """The item in the user's words: first node, its flavor, and what rides along."""
        first = self.nodes[0]
        flavors = [n.flavor_name for n in self.nodes if n.flavor_name]
        vol = sum(n.demand.volume_gb for n in self.nodes)
        parts = []
        if flavors:
            parts.append(" + ".join(flavors))
        if vol:
            parts.append(f"{vol} GiB of volumes")
        rest = f" and {len(self.nodes) - 1} node(s) tied to it" if len(self.nodes) > 1 else ""
        return f"node {first.name}{rest} ({', '.join(parts)})"


@dataclass(slots=True)
class PlacementProblem:
    """Everything the search needs, by index."""

    spec: ClusterSpec
    inventory: Inventory
    nodes: list[NodeSpec]
    zone_names: list[str]
    host_zone: list[int]
    base_free: list[list[int]]
    items: list[Item]
    constraints: list[Constraint]
    blocks: list[list[int]]
    """Zone blocks: lists of item indexes that must share one zone."""
    block_fixed_zone: list[int | None]
    existing_units: dict[str, int]
    """Unit name to host index, for units that already exist (fully or partly)."""
    reasons: list[str]
    """Contradictions found while building (the request is infeasible if any)."""


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self.parent
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _demand_tuple(d: Demand) -> list[int]:
    return [d.vcpus, d.ram_mb, d.disk_gb, d.volume_gb]


def build_problem(
    spec: ClusterSpec,
    inventory: Inventory,
    existing: Mapping[str, str],
    used: Mapping[str, Demand],
) -> PlacementProblem:
    """Turn a cluster, what exists, and what others use into a `PlacementProblem`."""
    reasons: list[str] = []
    zone_names = list(inventory.zones)
    zone_index = {z: i for i, z in enumerate(zone_names)}
    host_index = {h.name: i for i, h in enumerate(inventory.hosts)}
    host_zone = [zone_index[h.zone] for h in inventory.hosts]
    base_free = [[h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb] for h in inventory.hosts]
    for host, d in used.items():
        hi = host_index.get(host)
        if hi is not None:
            free = base_free[hi]
            for r, v in enumerate(_demand_tuple(d)):
                free[r] -= v

    nodes = expand(spec)
    unit_nodes: dict[str, list[NodeSpec]] = {}
    for n in nodes:
        unit_nodes.setdefault(n.unit, []).append(n)

    existing_units: dict[str, int] = {}
    for n in nodes:
        where = existing.get(n.name)
        if where is None:
            continue
        hi = host_index.get(where)
        if hi is None:
            reasons.append(f"node {n.name} exists on host {where}, which the inventory lacks")
            continue
        free = base_free[hi]
        for r, v in enumerate(_demand_tuple(n.demand)):
            free[r] -= v
        prior = existing_units.setdefault(n.unit, hi)
        if prior != hi:
            reasons.append(
                f"nodes of {n.unit} already sit on different hosts "
                f"({inventory.hosts[prior].name} and {where})"
            )

    # Hard host affinity ties units into one item.
    uf = _UnionFind()
    zone_uf = _UnionFind()
    zone_tied: set[str] = set()
    grouping_units: list[tuple[Grouping, list[str]]] = []
    for g in spec.groupings:
        units: list[str] = []
        for ref in g.members:
            units.extend(member_units(spec, ref))
        units = list(dict.fromkeys(units))
        grouping_units.append((g, units))
        if g.rule is Rule.AFFINITY and units:
            target = uf if g.scope is Scope.HOST else zone_uf
            if g.scope is Scope.ZONE:
                zone_tied.update(units)
            for u in units[1:]:
                target.union(units[0], u)

    components: dict[str, list[str]] = {}
    for unit in unit_nodes:
        components.setdefault(uf.find(unit), []).append(unit)

    items: list[Item] = []
    unit_item: dict[str, int] = {}
    # Replicas share profile objects and zone tuples: work each out once.
    demand_by_profile: dict[int, list[int]] = {}
    zone_sets: dict[tuple[str, ...], frozenset[int]] = {}
    comp_host: dict[str, int] = {}
    for root, units in components.items():
        fixed: int | None = None
        for u in units:
            hi = existing_units.get(u)
            if hi is None:
                continue
            if fixed is not None and fixed != hi:
                names = ", ".join(units[:4])
                reasons.append(
                    f"affinity ties {names} to one host, but they already sit on "
                    f"{inventory.hosts[fixed].name} and {inventory.hosts[hi].name}"
                )
            fixed = hi if fixed is None else fixed
        new_nodes = [n for u in units for n in unit_nodes[u] if n.name not in existing]
        if fixed is not None:
            comp_host[root] = fixed
        if not new_nodes:
            continue
        demand = [0, 0, 0, 0]
        zones: frozenset[int] | None = None
        for n in new_nodes:
            nd = demand_by_profile.get(id(n.profile))
            if nd is None:
                nd = demand_by_profile[id(n.profile)] = _demand_tuple(n.demand)
            demand[0] += nd[0]
            demand[1] += nd[1]
            demand[2] += nd[2]
            demand[3] += nd[3]
        for u in units:
            for n in unit_nodes[u]:
                if n.zones:
                    allowed = zone_sets.get(n.zones)
                    if allowed is None:
                        allowed = zone_sets[n.zones] = frozenset(
                            zone_index[z] for z in n.zones if z in zone_index
                        )
                    zones = allowed if zones is None else zones & allowed
        item = Item(
            index=len(items),
            nodes=new_nodes,
            demand=(demand[0], demand[1], demand[2], demand[3]),
            zones=zones,
            fixed_host=fixed,
            block=-1,
        )
        if zones is not None and not zones:
            reasons.append(f"{item.label()}: its nodes allow no common zone")
        items.append(item)
        for u in units:
            unit_item[u] = item.index

    # Hard zone affinity ties items into zone blocks; a shared host implies a shared zone.
    for units in components.values():
        for u in units[1:]:
            zone_uf.union(units[0], u)
    block_of_root: dict[str, int] = {}
    blocks: list[list[int]] = []
    block_fixed_zone: list[int | None] = []
    for root, units in components.items():
        if not any(u in zone_tied for u in units):
            continue
        zroot = zone_uf.find(units[0])
        b = block_of_root.get(zroot)
        if b is None:
            b = block_of_root[zroot] = len(blocks)
            blocks.append([])
            block_fixed_zone.append(None)
        fixed_host = comp_host.get(root)
        if fixed_host is not None:
            z = host_zone[fixed_host]
            was = block_fixed_zone[b]
            if was is not None and was != z:
                reasons.append(
                    f"zone affinity ties {', '.join(units[:3])} to one zone, but its "
                    f"members already sit in {zone_names[was]} and {zone_names[z]}"
                )
            block_fixed_zone[b] = z
        ii = unit_item.get(units[0])
        if ii is not None:
            blocks[b].append(ii)
            items[ii].block = b

    constraints: list[Constraint] = []
    all_zones = list(range(len(zone_names)))
    for g, units in grouping_units:
        if g.rule is Rule.AFFINITY:
            continue
        domains: list[int] = []
        if g.rule is Rule.SPREAD:
            # Only spread measures over domains; skip the per-host list for the other rules.
            zones_allowed: set[int] = set()
            for u in units:
                for n in unit_nodes.get(u, ()):
                    if n.zones:
                        zones_allowed.update(zone_index[z] for z in n.zones if z in zone_index)
                    else:
                        zones_allowed.update(all_zones)
            if g.scope is Scope.ZONE:
                domains = sorted(zones_allowed)
            else:
                domains = [h for h, z in enumerate(host_zone) if z in zones_allowed]
        c = Constraint(len(constraints), g, frozenset(units), domains)
        constraints.append(c)
        mult: dict[int, int] = {}
        for u in units:
            ii = unit_item.get(u)
            if ii is not None and u not in existing_units:
                mult[ii] = mult.get(ii, 0) + 1
        for ii, m in mult.items():
            items[ii].memberships.append((c.index, m))
            items[ii].rules.setdefault(c.key, []).append((c, m))
            if g.rule is Rule.ANTI_AFFINITY and m > g.max_per_domain:
                reasons.append(
                    f"{g.describe()} allows {g.max_per_domain} member(s) per {g.scope}, but "
                    f"affinity ties {m} of its members together ({items[ii].label()})"
                )

    return PlacementProblem(
        spec=spec,
        inventory=inventory,
        nodes=nodes,
        zone_names=zone_names,
        host_zone=host_zone,
        base_free=base_free,
        items=items,
        constraints=constraints,
        blocks=blocks,
        block_fixed_zone=block_fixed_zone,
        existing_units=existing_units,
        reasons=reasons,
    )

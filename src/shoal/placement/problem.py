"""The placement problem in solver terms: items, constraints and what already exists.

A cluster becomes *items* (sets of nodes that must share a host: a unit replica, an instance,
or everything a hard host-affinity grouping ties together) and *constraints* (anti-affinity,
spread and the soft rules, counted per host or zone). Hard zone affinity ties items into *zone
blocks* that must share a zone. Building this once keeps the search loops free of names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
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


# Most items of a large cluster belong to no counted rule: they share these two empties
# (never changed: `_constraints` gives an item its own on its first membership) instead of
# allocating a list and a dict each.
_NO_MEMBERSHIPS: list[tuple[int, int]] = []
_NO_RULES: dict[str, list[tuple[Constraint, int]]] = {}


def _demand_tuple(d: Demand) -> list[int]:
    return [d.vcpus, d.ram_mb, d.disk_gb, d.volume_gb]


@dataclass(slots=True)
class _Hosts:
    """The inventory by index, and the room each host has before this cluster's new nodes."""

    zone_names: list[str]
    zone_index: dict[str, int]
    host_index: dict[str, int]
    host_zone: list[int]
    base_free: list[list[int]]


@dataclass(slots=True)
class _Ties:
    """What hard affinity ties together: units sharing a host (`components`), units sharing a
    zone, and the units each grouping stands for."""

    grouping_units: list[tuple[Grouping, list[str]]]
    units: Iterable[str]
    """Every unit, in the order of the cluster's nodes."""
    host_tied: dict[str, list[str]]
    """Components host affinity made, by root unit (their units in `units` order)."""
    root_of: dict[str, str]
    """A host-tied unit's root."""
    zone_uf: _UnionFind
    zone_tied: set[str]

    def components(self) -> Iterator[tuple[str, list[str]]]:
        """(root, units) per component, in the order of each one's first unit: a unit no host
        affinity touched is its own (most units of a large cluster: no list kept for each)."""
        if not self.host_tied:
            for unit in self.units:
                yield unit, [unit]
            return
        seen: set[str] = set()
        for unit in self.units:
            root = self.root_of.get(unit)
            if root is None:
                yield unit, [unit]
            elif root not in seen:
                seen.add(root)
                yield root, self.host_tied[root]


@dataclass(slots=True)
class _Items:
    items: list[Item]
    unit_item: dict[str, int]
    """Unit name to the index of the item holding its new nodes, for the units a grouping
    names (zone blocks and constraints look only those up; most units of a large cluster
    are in none)."""
    comp_host: dict[str, int]
    """Component root to the host an existing member pins it to."""


def build_problem(
    spec: ClusterSpec,
    inventory: Inventory,
    existing: Mapping[str, str],
    used: Mapping[str, Demand],
    nodes: list[NodeSpec] | None = None,
) -> PlacementProblem:
    """Turn a cluster, what exists, and what others use into a `PlacementProblem`.

    Named steps, in order: index the hosts and take what others use; expand the nodes and
    take what existing nodes use; tie units by hard affinity; make items; make zone blocks;
    make the counted constraints. Each step appends the contradictions it finds to `reasons`.
    `nodes` is `expand(spec)` when the caller has it already.
    """
    reasons: list[str] = []
    hosts = index_hosts(inventory, used)
    if nodes is None:
        nodes = expand(spec)
    unit_nodes: dict[str, list[NodeSpec]] = {}
    for n in nodes:
        # A unit's list made with its first node: sized for it (most units have one node),
        # where appending to an empty list reserves room for four.
        listed = unit_nodes.get(n.unit)
        if listed is None:
            unit_nodes[n.unit] = [n]
        else:
            listed.append(n)
    existing_units = _place_existing(nodes, existing, inventory, hosts, reasons)
    ties = _tie_units(spec, unit_nodes)
    made = _make_items(ties, unit_nodes, existing, existing_units, inventory, hosts, reasons)
    blocks, block_fixed_zone = _zone_blocks(ties, made, hosts, reasons)
    constraints = _constraints(ties, unit_nodes, existing_units, made, hosts, reasons)
    return PlacementProblem(
        spec=spec,
        inventory=inventory,
        nodes=nodes,
        zone_names=hosts.zone_names,
        host_zone=hosts.host_zone,
        base_free=hosts.base_free,
        items=made.items,
        constraints=constraints,
        blocks=blocks,
        block_fixed_zone=block_fixed_zone,
        existing_units=existing_units,
        reasons=reasons,
    )


def index_hosts(inventory: Inventory, used: Mapping[str, Demand]) -> _Hosts:
    """Zones and hosts by index, and each host's room once others' use is taken."""
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
    return _Hosts(zone_names, zone_index, host_index, host_zone, base_free)


def _place_existing(
    nodes: list[NodeSpec],
    existing: Mapping[str, str],
    inventory: Inventory,
    hosts: _Hosts,
    reasons: list[str],
) -> dict[str, int]:
    """Take the room existing nodes use; answer where each existing unit sits."""
    existing_units: dict[str, int] = {}
    if not existing:
        return existing_units  # a new cluster: nothing to read node by node
    for n in nodes:
        where = existing.get(n.name)
        if where is None:
            continue
        hi = hosts.host_index.get(where)
        if hi is None:
            reasons.append(f"node {n.name} exists on host {where}, which the inventory lacks")
            continue
        free = hosts.base_free[hi]
        for r, v in enumerate(_demand_tuple(n.demand)):
            free[r] -= v
        prior = existing_units.setdefault(n.unit, hi)
        if prior != hi:
            reasons.append(
                f"nodes of {n.unit} already sit on different hosts "
                f"({inventory.hosts[prior].name} and {where})"
            )
    return existing_units


def _tie_units(spec: ClusterSpec, unit_nodes: dict[str, list[NodeSpec]]) -> _Ties:
    """Hard host affinity ties units into one component (one item); hard zone affinity ties
    them into one zone."""
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
    host_tied: dict[str, list[str]] = {}
    root_of: dict[str, str] = {}
    if uf.parent:  # only then is any unit tied to another
        for unit in list(uf.parent):
            root = uf.find(unit)
            root_of[unit] = root_of[root] = root
        for unit in unit_nodes:
            tied_to = root_of.get(unit)
            if tied_to is not None:
                host_tied.setdefault(tied_to, []).append(unit)
    return _Ties(grouping_units, unit_nodes.keys(), host_tied, root_of, zone_uf, zone_tied)


def _make_items(
    ties: _Ties,
    unit_nodes: dict[str, list[NodeSpec]],
    existing: Mapping[str, str],
    existing_units: dict[str, int],
    inventory: Inventory,
    hosts: _Hosts,
    reasons: list[str],
) -> _Items:
    """One item per component with new nodes: summed demand, common zones, pinned host."""
    items: list[Item] = []
    unit_item: dict[str, int] = {}
    grouped = {u for _, units in ties.grouping_units for u in units}
    # Replicas share profile objects and zone tuples: work each out once.
    demand_by_profile: dict[int, list[int]] = {}
    zone_sets: dict[tuple[str, ...], frozenset[int]] = {}
    comp_host: dict[str, int] = {}
    zone_index = hosts.zone_index
    looks: dict[str, tuple[tuple[int, int, int, int], frozenset[int] | None]] = {}
    for root, units in ties.components():
        fixed: int | None = None
        if existing_units:
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
        if existing:
            new_nodes = [n for u in units for n in unit_nodes[u] if n.name not in existing]
        elif len(units) == 1:
            new_nodes = unit_nodes[units[0]]  # shared, never changed: no copy per item
        else:
            new_nodes = [n for u in units for n in unit_nodes[u]]
        if fixed is not None:
            comp_host[root] = fixed
        if not new_nodes:
            continue
        # A lone unit with all its nodes new looks like every other replica of its group
        # (`expand` gives each replica the group's parts, profiles and zones): work its
        # demand and zones out once per group.
        look = new_nodes[0].group if len(units) == 1 and fixed is None else None
        known = looks.get(look) if look is not None else None
        if known is not None and len(new_nodes) == len(unit_nodes[units[0]]):
            item = Item(
                len(items), new_nodes, known[0], known[1], None, -1, _NO_MEMBERSHIPS, _NO_RULES
            )
            items.append(item)
            if units[0] in grouped:
                unit_item[units[0]] = item.index
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
            memberships=_NO_MEMBERSHIPS,
            rules=_NO_RULES,
        )
        if zones is not None and not zones:
            reasons.append(f"{item.label()}: its nodes allow no common zone")
        elif look is not None and len(new_nodes) == len(unit_nodes[units[0]]):
            looks[look] = (item.demand, zones)
        items.append(item)
        for u in units:
            if u in grouped:
                unit_item[u] = item.index
    return _Items(items, unit_item, comp_host)


def _zone_blocks(
    ties: _Ties, made: _Items, hosts: _Hosts, reasons: list[str]
) -> tuple[list[list[int]], list[int | None]]:
    """Hard zone affinity ties items into zone blocks; a shared host implies a shared zone."""
    blocks: list[list[int]] = []
    block_fixed_zone: list[int | None] = []
    if not ties.zone_tied:
        return blocks, block_fixed_zone
    zone_uf = ties.zone_uf
    for units in ties.host_tied.values():
        for u in units[1:]:
            zone_uf.union(units[0], u)
    block_of_root: dict[str, int] = {}
    for root, units in ties.components():
        if not any(u in ties.zone_tied for u in units):
            continue
        zroot = zone_uf.find(units[0])
        b = block_of_root.get(zroot)
        if b is None:
            b = block_of_root[zroot] = len(blocks)
            blocks.append([])
            block_fixed_zone.append(None)
        fixed_host = made.comp_host.get(root)
        if fixed_host is not None:
            z = hosts.host_zone[fixed_host]
            was = block_fixed_zone[b]
            if was is not None and was != z:
                reasons.append(
                    f"zone affinity ties {', '.join(units[:3])} to one zone, but its "
                    f"members already sit in {hosts.zone_names[was]} and {hosts.zone_names[z]}"
                )
            block_fixed_zone[b] = z
        ii = made.unit_item.get(units[0])
        if ii is not None:
            blocks[b].append(ii)
            made.items[ii].block = b
    return blocks, block_fixed_zone


def _spread_domains(
    g: Grouping, units: list[str], unit_nodes: dict[str, list[NodeSpec]], hosts: _Hosts
) -> list[int]:
    """The domains a spread measures its skew over: the zones its members may use, or
    those zones' hosts."""
    nz = len(hosts.zone_names)
    zone_index = hosts.zone_index
    zones_allowed: set[int] = set()
    for u in units:
        for n in unit_nodes.get(u, ()):
            if n.zones:
                zones_allowed.update(zone_index[z] for z in n.zones if z in zone_index)
            else:
                zones_allowed.update(range(nz))
        if len(zones_allowed) == nz:
            break  # every zone already: the rest cannot add one
    if g.scope is Scope.ZONE:
        return sorted(zones_allowed)
    return [h for h, z in enumerate(hosts.host_zone) if z in zones_allowed]


def _constraints(
    ties: _Ties,
    unit_nodes: dict[str, list[NodeSpec]],
    existing_units: dict[str, int],
    made: _Items,
    hosts: _Hosts,
    reasons: list[str],
) -> list[Constraint]:
    """One counted constraint per grouping other than hard affinity, and each item's
    memberships in it (how many of its new member units the item holds)."""
    constraints: list[Constraint] = []
    items, unit_item = made.items, made.unit_item
    for g, units in ties.grouping_units:
        if g.rule is Rule.AFFINITY:
            continue
        # Only spread measures over domains; the other rules need no domain list.
        domains = _spread_domains(g, units, unit_nodes, hosts) if g.rule is Rule.SPREAD else []
        c = Constraint(len(constraints), g, frozenset(units), domains)
        constraints.append(c)
        mult: dict[int, int] = {}
        for u in units:
            ii = unit_item.get(u)
            if ii is not None and u not in existing_units:
                mult[ii] = mult.get(ii, 0) + 1
        for ii, m in mult.items():
            item = items[ii]
            if item.memberships is _NO_MEMBERSHIPS:  # its own, now that it has one
                item.memberships, item.rules = [], {}
            item.memberships.append((c.index, m))
            item.rules.setdefault(c.key, []).append((c, m))
            if g.rule is Rule.ANTI_AFFINITY and m > g.max_per_domain:
                reasons.append(
                    f"{g.describe()} allows {g.max_per_domain} member(s) per {g.scope}, but "
                    f"affinity ties {m} of its members together ({items[ii].label()})"
                )
    return constraints

"""An independent check of a finished placement against every rule of the cluster.

It reads only the model (names, groupings, inventory), none of the solver's internals, so tests,
benchmarks and `shoal plan`'s summary can trust it to catch a solver bug rather than repeat it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from shoal.model.cluster import ClusterSpec, Grouping, Instance, NodeGroup
from shoal.model.enums import Rule, Scope
from shoal.model.inventory import Host, Inventory
from shoal.model.nodes import Demand, NodeSpec, allowed_zones, expand
from shoal.placement.result import RuleCheck, SoftViolation


@dataclass(frozen=True, slots=True)
class Verification:
    hard_violations: tuple[str, ...]
    soft_violations: tuple[SoftViolation, ...]
    checks: tuple[RuleCheck, ...]


def _eligible_zones(node_zones: Iterable[tuple[str, ...]], known: set[str]) -> set[str]:
    zones: set[str] = set()
    for allowed in node_zones:
        if not allowed:
            return set(known)  # one node that may go anywhere: every zone, read no further
        zones.update(z for z in allowed if z in known)
    return zones


@dataclass(slots=True)
class _Members:
    """Which groupings each node's unit counts in, by the name of the node's group or
    instance (`NodeSpec.group`), as `member_units` resolves a grouping's targets: a group by
    that name first, then an instance. Counting a unit's domain when its first node is read
    spares a list of unit names per grouping and a lookup per member."""

    of_group: dict[str, list[int]]
    of_instance: dict[str, list[int]]
    sizes: list[int]
    """Each grouping's member units (`RuleCheck.members`)."""

    def of(self, n: NodeSpec) -> list[int]:
        # An instance's node is its own unit and group; a replica's unit is `group-i`.
        if n.unit == n.group:
            return self.of_instance.get(n.group, _NONE)
        return self.of_group.get(n.group, _NONE)


_NONE: list[int] = []


def _members(
    spec: ClusterSpec, groups: dict[str, NodeGroup], instances: dict[str, Instance]
) -> _Members:
    of_group: dict[str, list[int]] = {}
    of_instance: dict[str, list[int]] = {}
    sizes: list[int] = []
    for gi, g in enumerate(spec.groupings):
        size = 0
        for target in dict.fromkeys(ref.target for ref in g.members):
            group = groups.get(target)
            if group is not None:
                of_group.setdefault(target, []).append(gi)
                size += len(set(group.replica_indexes))
            elif target in instances:
                of_instance.setdefault(target, []).append(gi)
                size += 1
        sizes.append(size)
    return _Members(of_group, of_instance, sizes)


def _member_zones(
    g: Grouping, groups: dict[str, NodeGroup], instances: dict[str, Instance]
) -> Iterator[tuple[str, ...]]:
    """The allowed zones of every node of the grouping's members, as `expand` gives them:
    one entry per part of a group with replicas (its replicas' nodes share it), one per
    instance."""
    for ref in g.members:
        group = groups.get(ref.target)
        if group is not None:
            if group.replica_indexes:
                for p in group.parts:
                    yield allowed_zones(group.zones, p.profile)
            continue
        inst = instances.get(ref.target)
        if inst is not None:
            yield allowed_zones((inst.zone,) if inst.zone else (), inst.profile)


def _check_grouping(
    g: Grouping,
    counts: dict[str, int],
    eligible: list[str],
) -> tuple[list[str], int, int]:
    """Hard violations, soft violation count, and domains used, for one grouping (`counts`:
    its member units per domain)."""
    used = len(counts)
    hard: list[str] = []
    soft = 0
    if g.rule is Rule.AFFINITY and used > 1:
        hard.append(
            f"{g.describe()}: members sit in {used} {g.scope}s ({', '.join(sorted(counts))})"
        )
    elif g.rule is Rule.ANTI_AFFINITY:
        for d, c in sorted(counts.items()):
            if c > g.max_per_domain:
                hard.append(f"{g.describe()}: {c} members in {g.scope} {d}")
    elif g.rule is Rule.SPREAD and eligible:
        per = [counts.get(d, 0) for d in eligible]
        if max(per) - min(per) > g.max_skew:
            hard.append(
                f"{g.describe()}: skew {max(per) - min(per)} over {len(eligible)} {g.scope}s"
            )
    elif g.rule is Rule.SOFT_ANTI_AFFINITY:
        soft = sum(max(0, c - g.max_per_domain) for c in counts.values())
    elif g.rule is Rule.SOFT_AFFINITY:
        soft = max(0, used - 1)
    return hard, soft, used


def verify_placement(
    spec: ClusterSpec,
    inventory: Inventory,
    hosts: Mapping[str, str] | Sequence[str],
    used: Mapping[str, Demand] | None = None,
    nodes: Sequence[NodeSpec] | None = None,
) -> Verification:
    """Check `hosts` (node name to host name, every node of the cluster) against every rule.

    `hosts` may also be the host of each of `nodes`, in their order (the solver has it so:
    no dict by name of every node to make and to read).

    `nodes`: `expand(spec)` when the caller has it already (the model's own expansion, so
    the check stays independent of the solver; expanding again costs a tenth of a solve).
    """
    nodes = expand(spec) if nodes is None else nodes
    if isinstance(hosts, Mapping):
        by_name = hosts.get
        in_order: Sequence[str | None] = [by_name(n.name) for n in nodes]
    else:
        in_order = hosts
    inv_hosts = {h.name: h for h in inventory.hosts}
    load: dict[str, list[int]] = {
        name: [d.vcpus, d.ram_mb, d.disk_gb, d.volume_gb] for name, d in (used or {}).items()
    }
    # Grouping targets looked up by name once (`member_units` scans the groups: quadratic
    # in them, a fifth of this check at 100,000 nodes in `benchmarks/placement.py`
    # `100k-on-50000`, 2,030 groups).
    groups: dict[str, NodeGroup] = {}
    instances: dict[str, Instance] = {}
    for group in spec.node_groups:
        groups.setdefault(group.name, group)  # the first of a name, as `node_group` finds
    for inst in spec.instances:
        instances.setdefault(inst.name, inst)
    members = _members(spec, groups, instances)
    by_host = [g.scope is Scope.HOST for g in spec.groupings]
    domains: list[dict[str, int]] = [{} for _ in spec.groupings]
    hard = _read_nodes(nodes, in_order, inv_hosts, load, members, by_host, domains)
    hard.extend(_over_capacity(inv_hosts, load))
    soft_out: list[SoftViolation] = []
    checks: list[RuleCheck] = []
    known_zones = set(inventory.zones)
    for gi, g in enumerate(spec.groupings):
        eligible: list[str] = []
        if g.rule is Rule.SPREAD:
            zones = _eligible_zones(_member_zones(g, groups, instances), known_zones)
            if g.scope is Scope.ZONE:
                eligible = sorted(zones)
            else:
                eligible = [h.name for h in inventory.hosts if h.zone in zones]
        g_hard, g_soft, used_domains = _check_grouping(g, domains[gi], eligible)
        hard.extend(g_hard)
        if g_soft:
            what = (
                f"{g_soft} member(s) over {g.max_per_domain} per {g.scope}"
                if g.rule is Rule.SOFT_ANTI_AFFINITY
                else f"members spread over {used_domains} {g.scope}s instead of one"
            )
            soft_out.append(SoftViolation(g.name, str(g.rule), g_soft, f"{g.describe()}: {what}"))
        checks.append(
            RuleCheck(
                grouping=g.name,
                rule=str(g.rule),
                scope=str(g.scope),
                members=members.sizes[gi],
                domains_used=used_domains,
                satisfied=not g_hard and not g_soft,
            )
        )
    return Verification(tuple(hard), tuple(soft_out), tuple(checks))


def _read_nodes(
    nodes: Sequence[NodeSpec],
    in_order: Sequence[str | None],
    inv_hosts: dict[str, Host],
    load: dict[str, list[int]],
    members: _Members,
    by_host: list[bool],
    domains: list[dict[str, int]],
) -> list[str]:
    """One pass over the nodes: hosts known, zones allowed, each host's load, units whole;
    each unit's domain counted in its groupings (`domains`). The hard violations found."""
    hard: list[str] = []
    unit_host: dict[str, str] = {}
    # Replicas share their profile object: its demand is worked out once.
    demand_of: dict[int, tuple[int, int, int, int]] = {}
    # Each host met so far with its load row: one lookup per node instead of two.
    met: dict[str, tuple[Host, list[int]]] = {}
    # Consecutive nodes often share a profile, a host (the parts of a unit) and a unit:
    # what they share is at hand without a lookup (this check's CPU at 100,000 nodes,
    # `benchmarks/placement.py` `100k-on-50000`: 0.29 s before, 0.18 s after).
    last_profile: object = None
    other_profile: object = None
    d = other_d = (0, 0, 0, 0)
    last_name: str | None = None
    last_unit: str | None = None
    unit_prior = ""
    host: Host | None = None
    row = [0, 0, 0, 0]
    # Bound methods held locally: this loop reads every node of the cluster.
    at, unit_at = met.get, unit_host.get
    for n, host_name in zip(nodes, in_order, strict=True):
        if host_name is None:
            hard.append(f"node {n.name} has no host")
            continue
        if host_name is not last_name or host is None:
            seen = at(host_name)
            if seen is None:
                known = inv_hosts.get(host_name)
                if known is None:
                    hard.append(f"node {n.name} is on unknown host {host_name}")
                    continue
                new_row = load.get(host_name)
                if new_row is None:
                    new_row = load[host_name] = [0, 0, 0, 0]
                seen = met[host_name] = (known, new_row)
            host, row = seen
            last_name = host_name
        if n.zones and host.zone not in n.zones:
            hard.append(f"node {n.name} is in zone {host.zone}, outside {', '.join(n.zones)}")
        profile = n.profile
        if profile is not last_profile:
            if profile is other_profile:  # a unit's parts take turns: swap the two
                last_profile, other_profile, d, other_d = profile, last_profile, other_d, d
            else:
                known_d = demand_of.get(id(profile))
                if known_d is None:
                    nd = n.demand
                    known_d = demand_of[id(profile)] = (
                        nd.vcpus,
                        nd.ram_mb,
                        nd.disk_gb,
                        nd.volume_gb,
                    )
                last_profile, other_profile, d, other_d = profile, last_profile, known_d, d
        row[0] += d[0]
        row[1] += d[1]
        row[2] += d[2]
        row[3] += d[3]
        unit = n.unit
        if unit is not last_unit:
            last_unit = unit
            prior = unit_at(unit)
            if prior is None:
                unit_host[unit] = unit_prior = host_name
                for gi in members.of(n):  # the unit's first node: its domain counts
                    domain = host_name if by_host[gi] else host.zone
                    counts = domains[gi]
                    counts[domain] = counts.get(domain, 0) + 1
                continue
            unit_prior = prior
        if unit_prior != host_name:
            hard.append(f"unit {unit} is split over hosts {unit_prior} and {host_name}")
    return hard


def _over_capacity(inv_hosts: dict[str, Host], load: dict[str, list[int]]) -> list[str]:
    over: list[str] = []
    for name, row in load.items():
        h = inv_hosts.get(name)
        if h is None:
            continue
        if row[0] > h.vcpus or row[1] > h.ram_mb or row[2] > h.disk_gb or row[3] > h.volume_gb:
            over.append(name)
    hard: list[str] = []
    for name in sorted(over):
        h = inv_hosts[name]
        row = load[name]
        for res, cap, val in zip(
            ("vcpus", "ram_mb", "disk_gb", "volume_gb"),
            (h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb),
            row,
            strict=True,
        ):
            if val > cap:
                hard.append(f"host {name} is over capacity on {res}: {val} > {cap}")
    return hard

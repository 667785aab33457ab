"""Random small placement problems: a cluster, an inventory, what exists and what others use.

One generator, two sources of randomness: hypothesis (`cases()`, which shrinks failures to a
small example) and `random.Random` (`random_case(seed)`, for seeded sweeps). Documents are
valid the way the spec layer requires: unique names, members that exist and are listed once,
counts and `max_per_domain` >= 1, affinity members whose zones meet, and no hard affinity with
a hard anti-affinity (max 1 per domain) over the same members in scopes that contradict.

Capacities are drawn tight on purpose, so infeasible requests and greedy dead ends both occur.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field, replace
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, DEFAULT_IMAGES
from shoal.model.cluster import ClusterSpec, Grouping, Instance, MemberRef, NodeGroup, UnitPart
from shoal.model.enums import Objective, Rule, Scope
from shoal.model.inventory import Host, Inventory
from shoal.model.nodes import Demand, expand
from shoal.model.profile import Profile, ServerProfile, VolumeProfile
from shoal.placement import solve

T = TypeVar("T")

MAX_NODES = 30
MAX_HOSTS = 12
GROUP_NAMES = ("web", "db", "app", "cache")
INSTANCE_NAMES = ("bastion", "vault", "monitor")
_F = {f.name: f for f in CLASSIC_FLAVORS}
# Small flavors are commoner, as in real clusters; m1.xlarge fills a 16-vcpu host by half.
FLAVORS = tuple(
    _F[n]
    for n in ("m1.tiny", "m1.small", "m1.small", "m1.medium", "m1.medium", "m1.large", "m1.xlarge")
)
# Host shapes (vcpus, ram_mb, disk_gb, volume_gb), commoner ones repeated; tightness comes
# mostly from how few hosts there are (1 to 12 for up to 30 nodes).
HOST_SHAPES = (
    (4, 8192, 100, 0),
    (8, 16384, 200, 500),
    (8, 16384, 200, 500),
    (16, 32768, 500, 1000),
    (16, 32768, 500, 1000),
    (16, 32768, 500, 1000),
    (16, 32768, 500, 0),
    (32, 65536, 1000, 2000),
)


@dataclass(frozen=True)
class Case:
    spec: ClusterSpec
    inventory: Inventory
    existing: dict[str, str] = field(default_factory=dict)
    used: dict[str, Demand] = field(default_factory=dict)
    seed: int = 0

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        return (
            f"Case(spec={self.spec!r},\n  inventory={self.inventory.hosts!r},\n"
            f"  existing={self.existing!r},\n  used={self.used!r}, seed={self.seed})"
        )


class Chooser(Protocol):
    def int(self, lo: int, hi: int) -> int: ...
    def pick(self, items: Sequence[T]) -> T: ...
    def chance(self, p: float) -> bool: ...


class RandomChooser:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def pick(self, items: Sequence[T]) -> T:
        return items[self.rng.randrange(len(items))]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


class DrawChooser:
    """Hypothesis draws behind the same interface; integers shrink towards the low end."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def int(self, lo: int, hi: int) -> int:
        return int(self.draw(st.integers(lo, hi)))

    def pick(self, items: Sequence[T]) -> T:
        return items[self.int(0, len(items) - 1)]

    def chance(self, p: float) -> bool:
        # Shrinks to False: the simpler document leaves the option out.
        return self.int(0, 99) >= round(100 * (1 - p))


def subset(c: Chooser, items: Sequence[T], nonempty: bool = False) -> list[T]:
    out = [x for x in items if c.chance(0.5)]
    if nonempty and not out:
        out = [c.pick(items)]
    return out


# -- inventory -------------------------------------------------------------------------------


def gen_inventory(c: Chooser, zones: tuple[str, ...], need: Demand) -> list[Host]:
    """1 to 12 hosts over `zones`; half the time just enough of them for `need` (tight)."""
    tight = c.chance(0.5)
    n_hosts = c.int(0, 1) if tight else c.int(len(zones), MAX_HOSTS)  # tight: hosts to spare
    uniform = c.chance(0.4)  # identical hosts: symmetric, the exact search's pruning matters
    shape = c.pick(HOST_SHAPES)
    hosts: list[Host] = []
    have = [0, 0, 0, 0]
    for i in range(MAX_HOSTS):
        enough = i >= len(zones) and all(h >= n for h, n in zip(have, astuple(need), strict=True))
        if tight and enough:
            if n_hosts == 0:
                break
            n_hosts -= 1
        if not tight and i >= n_hosts:
            break
        zone = i % len(zones) if i < len(zones) else c.int(0, len(zones) - 1)
        if not uniform:
            shape = c.pick(HOST_SHAPES)
        hosts.append(Host(f"h{i + 1:02d}", zones[zone], *shape))
        have = [h + s for h, s in zip(have, shape, strict=True)]
    return hosts


def gen_used(c: Chooser, hosts: list[Host]) -> dict[str, Demand]:
    """Capacity other tenants take (rarely more than the host has: overcommitted)."""
    used: dict[str, Demand] = {}
    if c.chance(0.25):
        for h in hosts:
            if c.chance(0.4):
                quarter = c.int(1, 3) if c.chance(0.97) else 5  # 5/4: overcommitted
                used[h.name] = Demand(
                    h.vcpus * quarter // 4, h.ram_mb * quarter // 4, h.disk_gb // 4, 0
                )
    return used


# -- cluster ---------------------------------------------------------------------------------


def _server(c: Chooser) -> ServerProfile:
    return ServerProfile(c.pick(FLAVORS), CIRROS)


def _volume(c: Chooser) -> VolumeProfile:
    return VolumeProfile(c.pick((10, 50, 100, 200, 400)))


def _zones(c: Chooser, zones: tuple[str, ...], p: float) -> tuple[str, ...]:
    return tuple(subset(c, zones, nonempty=True)) if c.chance(p) else ()


def gen_groups(c: Chooser, zones: tuple[str, ...]) -> tuple[list[NodeGroup], list[Instance]]:
    budget = MAX_NODES
    groups: list[NodeGroup] = []
    for name in GROUP_NAMES[: c.int(1, len(GROUP_NAMES))]:
        kind = c.pick(("server", "server", "unit", "unit", "volume"))
        parts: tuple[UnitPart, ...]
        if kind == "unit":
            parts = (UnitPart("server", _server(c)), UnitPart("data", _volume(c)))
        elif kind == "server":
            parts = (UnitPart(None, _server(c)),)
        else:
            parts = (UnitPart(None, _volume(c)),)
        most = min(6, budget // len(parts))
        if most < 1:
            break
        count = c.int(1, most)
        budget -= count * len(parts)
        groups.append(NodeGroup(name, parts, count=count, zones=_zones(c, zones, 0.35)))
    instances: list[Instance] = []
    for name in INSTANCE_NAMES[: c.int(0, len(INSTANCE_NAMES))]:
        if budget < 1:
            break
        budget -= 1
        profile: Profile = _volume(c) if c.chance(0.3) else _server(c)
        zone = c.pick(zones) if c.chance(0.3) else None
        instances.append(Instance(name, profile, zone=zone))
    return groups, instances


def _target_zones(
    groups: list[NodeGroup], instances: list[Instance], target: str
) -> set[str] | None:
    for g in groups:
        if g.name == target:
            return set(g.zones) if g.zones else None
    for i in instances:
        if i.name == target:
            return {i.zone} if i.zone else None
    return None


def _contradicts(a: Grouping, b: Grouping, units: dict[str, int]) -> bool:
    """Hard affinity and anti-affinity (max 1) over >= 2 shared units in clashing scopes."""
    for together, apart in ((a, b), (b, a)):
        if together.rule is not Rule.AFFINITY or apart.rule is not Rule.ANTI_AFFINITY:
            continue
        if apart.max_per_domain != 1:
            continue
        if together.scope is Scope.ZONE and apart.scope is Scope.HOST:
            continue
        shared = {m.target for m in together.members} & {m.target for m in apart.members}
        if sum(units[t] for t in shared) >= 2:
            return True
    return False


def gen_groupings(c: Chooser, groups: list[NodeGroup], instances: list[Instance]) -> list[Grouping]:
    units = {g.name: g.count for g in groups} | {i.name: 1 for i in instances}
    targets = list(units)
    out: list[Grouping] = []
    for k in range(c.int(0, 4)):
        rule = c.pick(tuple(Rule))
        scope = c.pick(tuple(Scope))
        refs: list[MemberRef] = []
        for t in subset(c, targets, nonempty=True):
            group = next((g for g in groups if g.name == t), None)
            part = None
            if group is not None and group.is_unit and c.chance(0.3):
                part = c.pick(group.parts).part
            refs.append(MemberRef(t, part))
        g = Grouping(
            f"rule{k + 1}",
            tuple(refs),
            rule,
            scope,
            # Each parameter only on the rules it belongs to, as the spec layer demands.
            max_per_domain=c.int(1, 3)
            if rule in (Rule.ANTI_AFFINITY, Rule.SOFT_ANTI_AFFINITY) and c.chance(0.4)
            else 1,
            max_skew=c.int(1, 2) if rule is Rule.SPREAD else 1,
        )
        if rule is Rule.AFFINITY:
            common: set[str] | None = None
            for r in refs:
                z = _target_zones(groups, instances, r.target)
                if z is not None:
                    common = z if common is None else common & z
            if common is not None and not common:
                continue  # the spec layer rejects affinity whose zones never meet
        if any(_contradicts(g, other, units) for other in out):
            continue
        out.append(g)
    return out


def gen_spec(c: Chooser, zones: tuple[str, ...]) -> ClusterSpec:
    groups, instances = gen_groups(c, zones)
    groupings = gen_groupings(c, groups, instances)
    return ClusterSpec(
        "prop",
        node_groups=tuple(groups),
        instances=tuple(instances),
        groupings=tuple(groupings),
        objective=c.pick((Objective.SPREAD, Objective.PACK)),
    )


def gen_existing(
    c: Chooser, spec: ClusterSpec, inv: Inventory, used: dict[str, Demand]
) -> tuple[ClusterSpec, dict[str, str]]:
    """Scale-out: place a smaller count of one group with the solver, then scale it back up.

    Returns the spec to place and the existing placement (maybe with some nodes dropped, so a
    unit can be half there). When the smaller request is infeasible there is nothing existing.
    """
    grown = [i for i, g in enumerate(spec.node_groups) if g.count >= 2]
    if not grown:
        return spec, {}
    gi = c.pick(grown)
    group = spec.node_groups[gi]
    smaller_groups = list(spec.node_groups)
    smaller_groups[gi] = replace(group, count=c.int(1, group.count - 1))
    smaller = replace(spec, node_groups=tuple(smaller_groups))
    before = solve(smaller, inv, used=used, seed=c.int(0, 3))
    if not before.feasible:
        return spec, {}
    existing = dict(before.hosts)
    if c.chance(0.3):
        existing = {n: h for n, h in existing.items() if c.chance(0.7)}
    return spec, existing


def gen_stale_existing(c: Chooser, spec: ClusterSpec, inv: Inventory) -> dict[str, str]:
    """Some units already somewhere, with no regard for the rules: a spec edited after the
    fact (a grouping added, a zone narrowed) or capacity that shrank. Often infeasible."""
    existing: dict[str, str] = {}
    by_unit: dict[str, list[str]] = {}
    for n in expand(spec):
        by_unit.setdefault(n.unit, []).append(n.name)
    for names in by_unit.values():
        if c.chance(0.4):
            host = c.pick(inv.hosts).name
            existing.update(dict.fromkeys(names, host))
    return existing


def gen_case(c: Chooser) -> Case:
    zones = tuple(f"az{z}" for z in range(1, c.int(1, 4) + 1))
    spec = gen_spec(c, zones)
    need = sum((n.demand for n in expand(spec)), Demand())
    hosts = gen_inventory(c, zones, need)
    inv = Inventory(hosts=tuple(hosts), flavors=CLASSIC_FLAVORS, images=DEFAULT_IMAGES)
    used = gen_used(c, hosts)
    existing: dict[str, str] = {}
    if c.chance(0.3):
        spec, existing = gen_existing(c, spec, inv, used)
    elif c.chance(0.06):
        existing = gen_stale_existing(c, spec, inv)
    return Case(spec, inv, existing, used, seed=c.int(0, 3))


@st.composite
def cases(draw: Any) -> Case:
    return gen_case(DrawChooser(draw))


def random_case(seed: int) -> Case:
    return gen_case(RandomChooser(seed))

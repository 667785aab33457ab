"""The yardstick for placement: an exact CP-SAT model of the placement rules, and a plain checker.

Both read only the model (`expand`, `member_units`, the inventory) and share no code with
`shoal.placement`, so a test that compares the solver with them compares two independent
readings of the same rules:

- every unit (nodes that share a host) sits on exactly one host; a node with zones sits in one
  of them; nodes in `existing` stay where they are;
- per host, the demands placed on it plus `used` fit its capacity in vcpus, RAM, disk, volume;
- affinity: all member units in one domain; anti-affinity: at most `max_per_domain` member
  units per domain; spread: over the eligible domains, max count - min count <= `max_skew`.
  The eligible zones of a spread are the union of its members' nodes' zones (every inventory
  zone when any member node may go anywhere); its eligible hosts are the hosts in those zones;
- soft rules never decide feasibility.

The benchmark (`benchmarks/placement.py`) imports `small_pack_case` and `cpsat_min_hosts`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ortools.sat.python import cp_model

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, DEFAULT_IMAGES
from shoal.model.cluster import ClusterSpec, Grouping, Instance, MemberRef, NodeGroup, UnitPart
from shoal.model.enums import Objective, Rule, Scope
from shoal.model.inventory import Host, Inventory
from shoal.model.nodes import Demand, NodeSpec, expand, member_units
from shoal.model.profile import ServerProfile, VolumeProfile

Status = Literal["feasible", "infeasible", "unknown"]


@dataclass(frozen=True, slots=True)
class OracleResult:
    status: Status
    hosts: dict[str, str] | None = None
    """Node name to host name, when a placement was found."""
    hosts_used: int | None = None
    optimal: bool = False
    """With `min_hosts`: `hosts_used` is proven minimal."""


def _demand(d: Demand) -> tuple[int, int, int, int]:
    return (d.vcpus, d.ram_mb, d.disk_gb, d.volume_gb)


def _capacity(h: Host) -> tuple[int, int, int, int]:
    return (h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb)


def _units(spec: ClusterSpec) -> dict[str, list[NodeSpec]]:
    units: dict[str, list[NodeSpec]] = {}
    for n in expand(spec):
        units.setdefault(n.unit, []).append(n)
    return units


def _grouping_units(spec: ClusterSpec, g: Grouping) -> list[str]:
    return list(dict.fromkeys(u for ref in g.members for u in member_units(spec, ref)))


def eligible_domains(
    spec: ClusterSpec, inventory: Inventory, g: Grouping, units: dict[str, list[NodeSpec]]
) -> list[str]:
    """The domains a spread grouping is measured over (zone names or host names)."""
    known = list(inventory.zones)
    zones: set[str] = set()
    for u in _grouping_units(spec, g):
        for n in units.get(u, []):
            zones.update(z for z in n.zones if z in known) if n.zones else zones.update(known)
    if g.scope is Scope.ZONE:
        return [z for z in known if z in zones]
    return [h.name for h in inventory.hosts if h.zone in zones]


def check_placement(
    spec: ClusterSpec,
    inventory: Inventory,
    hosts: Mapping[str, str],
    used: Mapping[str, Demand] | None = None,
    existing: Mapping[str, str] | None = None,
) -> list[str]:
    """Every hard rule `hosts` breaks, in plain words; [] when the placement is valid."""
    out: list[str] = []
    by_name = {h.name: h for h in inventory.hosts}
    units = _units(spec)
    unit_host: dict[str, str] = {}
    load: dict[str, list[int]] = {}
    for name, d in (used or {}).items():
        if name in by_name:
            load[name] = list(_demand(d))
    for unit, nodes in units.items():
        for n in nodes:
            h = hosts.get(n.name)
            if h not in by_name:
                out.append(f"{n.name}: not placed on a known host ({h})")
                continue
            if existing and n.name in existing and existing[n.name] != h:
                out.append(f"{n.name}: moved from {existing[n.name]} to {h}")
            if n.zones and by_name[h].zone not in n.zones:
                out.append(f"{n.name}: zone {by_name[h].zone} not in {n.zones}")
            if unit_host.setdefault(unit, h) != h:
                out.append(f"unit {unit}: split over {unit_host[unit]} and {h}")
            row = load.setdefault(h, [0, 0, 0, 0])
            for r, v in enumerate(_demand(n.demand)):
                row[r] += v
    for h, row in load.items():
        cap = _capacity(by_name[h])
        for r in range(4):
            if row[r] > cap[r]:
                out.append(f"host {h}: resource {r} at {row[r]} > {cap[r]}")
    for g in spec.groupings:
        members = [u for u in _grouping_units(spec, g) if u in unit_host]
        if g.scope is Scope.HOST:
            count = Counter(unit_host[u] for u in members)
        else:
            count = Counter(by_name[unit_host[u]].zone for u in members)
        if g.rule is Rule.AFFINITY and len(count) > 1:
            out.append(f"{g.name}: affinity over {sorted(count)}")
        elif g.rule is Rule.ANTI_AFFINITY and count and max(count.values()) > g.max_per_domain:
            out.append(f"{g.name}: anti-affinity {dict(count)}")
        elif g.rule is Rule.SPREAD:
            per = [count.get(d, 0) for d in eligible_domains(spec, inventory, g, units)]
            if per and max(per) - min(per) > g.max_skew:
                out.append(f"{g.name}: spread skew {max(per) - min(per)} ({per})")
    return out


def cpsat_place(
    spec: ClusterSpec,
    inventory: Inventory,
    existing: Mapping[str, str] | None = None,
    used: Mapping[str, Demand] | None = None,
    min_hosts: bool = False,
    time_limit_s: float = 10.0,
    workers: int = 1,
) -> OracleResult:
    """Find a placement with CP-SAT (the fewest hosts with `min_hosts`), or prove none exists."""
    existing = existing or {}
    used = used or {}
    hosts = list(inventory.hosts)
    zones = list(inventory.zones)
    units = _units(spec)
    m = cp_model.CpModel()

    demand = {
        u: [sum(_demand(n.demand)[r] for n in ns) for r in range(4)] for u, ns in units.items()
    }
    room = [
        [c - t for c, t in zip(_capacity(h), _demand(used.get(h.name, Demand())), strict=True)]
        for h in hosts
    ]

    # x[u][h]: unit u sits on host h; only for hosts its zones and `existing` allow, and that
    # could hold it alone (implied by capacity; stated so the LP bound sees it too).
    x: dict[str, dict[int, cp_model.IntVar]] = {}
    for unit, nodes in units.items():
        allowed = {
            h
            for h in range(len(hosts))
            if all(d <= c for d, c in zip(demand[unit], room[h], strict=True))
        }
        for n in nodes:
            if n.zones:
                allowed &= {i for i, h in enumerate(hosts) if h.zone in n.zones}
            if n.name in existing:
                allowed &= {i for i, h in enumerate(hosts) if h.name == existing[n.name]}
        if not allowed:
            return OracleResult("infeasible")
        x[unit] = {h: m.new_bool_var(f"x[{unit},{hosts[h].name}]") for h in sorted(allowed)}
        m.add_exactly_one(x[unit].values())

    def on_host(unit: str, h: int) -> cp_model.LinearExprT:
        return x[unit].get(h, 0)

    def in_zone(unit: str, z: str) -> cp_model.LinearExprT:
        return sum(v for h, v in x[unit].items() if hosts[h].zone == z)

    # Capacity.
    for h in range(len(hosts)):
        for r in range(4):
            if room[h][r] < 0:
                return OracleResult("infeasible")  # others alone overfill the host
            terms = [demand[u][r] * x[u][h] for u in units if h in x[u] and demand[u][r]]
            if terms:
                m.add(sum(terms) <= room[h][r])

    # Groupings, over the domains of their scope.
    for g in spec.groupings:
        members = [u for u in _grouping_units(spec, g) if u in x]
        if not members or not g.rule.is_hard:
            continue
        if g.scope is Scope.HOST:
            domains = [h.name for h in hosts]
            count_in = {d: (lambda u, h=i: on_host(u, h)) for i, d in enumerate(domains)}
        else:
            domains = zones
            count_in = {d: (lambda u, z=d: in_zone(u, z)) for d in domains}
        if g.rule is Rule.AFFINITY:
            first = members[0]
            for d in domains:
                for u in members[1:]:
                    m.add(count_in[d](u) == count_in[d](first))
        elif g.rule is Rule.ANTI_AFFINITY:
            for d in domains:
                m.add(sum(count_in[d](u) for u in members) <= g.max_per_domain)
        else:  # spread
            eligible = eligible_domains(spec, inventory, g, units)
            hi = m.new_int_var(0, len(members), f"max[{g.name}]")
            lo = m.new_int_var(0, len(members), f"min[{g.name}]")
            for d in eligible:
                c = sum(count_in[d](u) for u in members)
                m.add(c <= hi)
                m.add(c >= lo)
            m.add(hi - lo <= g.max_skew)

    if min_hosts:
        busy = [m.new_bool_var(f"busy[{h.name}]") for h in hosts]
        for u in x:
            for h, v in x[u].items():
                m.add_implication(v, busy[h])
        m.minimize(sum(busy))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = workers
    # The full LP relaxation: pigeonhole-like proofs (12 members, 11 hosts) take one worker
    # seconds without it and milliseconds with it.
    solver.parameters.linearization_level = 2
    solver.parameters.random_seed = 0
    status = solver.solve(m)
    if status == cp_model.INFEASIBLE:
        return OracleResult("infeasible")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return OracleResult("unknown")
    placed: dict[str, str] = {}
    for unit, nodes in units.items():
        h = next(h for h, v in x[unit].items() if solver.value(v))
        for n in nodes:
            placed[n.name] = hosts[h].name
    return OracleResult(
        "feasible",
        placed,
        len(set(placed.values())),
        optimal=min_hosts and status == cp_model.OPTIMAL,
    )


def cpsat_min_hosts(
    spec: ClusterSpec, inventory: Inventory, time_limit_s: float = 30.0
) -> int | None:
    """The fewest hosts any valid placement uses; None if infeasible or not proven in time."""
    r = cpsat_place(spec, inventory, min_hosts=True, time_limit_s=time_limit_s, workers=2)
    return r.hosts_used if r.optimal else None


# -- a benchmark case ---------------------------------------------------------------------------

_FLAVOR = {f.name: f for f in CLASSIC_FLAVORS}


def _server(flavor: str) -> ServerProfile:
    return ServerProfile(_FLAVOR[flavor], CIRROS)


def _pack_case_once(rng: random.Random) -> tuple[ClusterSpec, Inventory]:
    n_zones = rng.choice((2, 3))
    n_hosts = rng.randint(10, 12)
    shapes = ((16, 32768, 500, 1000), (8, 16384, 250, 500), (24, 49152, 600, 1500))
    hosts = tuple(
        Host(f"h{i + 1:02d}", f"az{i % n_zones + 1}", *rng.choice(shapes)) for i in range(n_hosts)
    )
    inv = Inventory(hosts=hosts, flavors=CLASSIC_FLAVORS, images=DEFAULT_IMAGES)
    db = NodeGroup(
        "db",
        (
            UnitPart("server", _server(rng.choice(("m1.medium", "m1.large")))),
            UnitPart("data", VolumeProfile(rng.choice((100, 200, 300)))),
        ),
        count=rng.randint(3, 4),
    )
    web = NodeGroup(
        "web",
        (UnitPart(None, _server(rng.choice(("m1.small", "m1.medium")))),),
        count=rng.randint(6, 10),
    )
    cache = NodeGroup("cache", (UnitPart(None, _server("m1.small")),), count=rng.randint(3, 5))
    batch = NodeGroup(
        "batch",
        (UnitPart(None, _server(rng.choice(("m1.large", "m1.xlarge")))),),
        count=rng.randint(2, 4),
    )
    instances = (
        Instance("bastion", _server("m1.tiny")),
        Instance("backup", VolumeProfile(rng.choice((200, 400)))),
    )
    groupings = (
        Grouping("db-apart", (MemberRef("db"),), Rule.ANTI_AFFINITY, Scope.HOST),
        Grouping("web-spread", (MemberRef("web"),), Rule.SPREAD, Scope.ZONE),
        Grouping("cache-web", (MemberRef("cache"), MemberRef("web")), Rule.SOFT_AFFINITY),
        Grouping(
            "batch-apart",
            (MemberRef("batch"),),
            Rule.ANTI_AFFINITY,
            Scope.HOST,
            max_per_domain=2,
        ),
        Grouping("db-zones", (MemberRef("db"),), Rule.SPREAD, Scope.ZONE),
    )
    spec = ClusterSpec(
        f"pack-{rng.random():.6f}",
        node_groups=(db, web, cache, batch),
        instances=instances,
        groupings=groupings,
        objective=Objective.PACK,
    )
    return spec, inv


def small_pack_case(seed: int) -> tuple[ClusterSpec, Inventory]:
    """A feasible mixed cluster of 20-30 nodes on 10-12 hosts, objective pack; same per seed."""
    rng = random.Random(seed)
    while True:
        spec, inv = _pack_case_once(rng)
        if cpsat_place(spec, inv, time_limit_s=10.0).status == "feasible":
            return spec, inv

"""One rule or behaviour per case, on the default inventory (az1, az2 x 3 hosts of 16 vcpus,
32 GiB RAM, 500 GB disk, 1000 GB volumes) or a tiny handmade one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, DEFAULT_IMAGES, default_inventory
from shoal.model.cluster import ClusterSpec, Grouping, Instance, MemberRef, NodeGroup, UnitPart
from shoal.model.enums import Objective, Rule, Scope
from shoal.model.inventory import Flavor, Host, Inventory
from shoal.model.nodes import Demand, expand
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.placement import PlacementResult, PlacementStatus, solve, verify_placement
from tests.oracle import check_placement, cpsat_min_hosts, cpsat_place, small_pack_case

ROOT = Path(__file__).resolve().parents[2]
INV = default_inventory()
FLAVOR = {f.name: f for f in CLASSIC_FLAVORS}


# -- building blocks ----------------------------------------------------------------------------


def group(
    name: str,
    flavor: str = "m1.small",
    count: int = 1,
    zones: tuple[str, ...] = (),
    volume: int | None = None,
) -> NodeGroup:
    """`count` servers of `flavor`; with `volume`, units of a server and a volume (`data`)."""
    server = ServerProfile(FLAVOR[flavor], CIRROS)
    if volume is None:
        parts: tuple[UnitPart, ...] = (UnitPart(None, server),)
    else:
        parts = (UnitPart("server", server), UnitPart("data", VolumeProfile(volume)))
    return NodeGroup(name, parts, count=count, zones=zones)


def rule(
    name: str,
    kind: str,
    *members: str,
    scope: str = "host",
    max_per_domain: int = 1,
    max_skew: int = 1,
) -> Grouping:
    return Grouping(
        name,
        tuple(MemberRef.parse(m) for m in members),
        Rule(kind),
        Scope(scope),
        max_per_domain=max_per_domain,
        max_skew=max_skew,
    )


def cluster(
    *groups: NodeGroup,
    rules: tuple[Grouping, ...] = (),
    instances: tuple[Instance, ...] = (),
    objective: Objective = Objective.SPREAD,
) -> ClusterSpec:
    return ClusterSpec("t", groups, instances, rules, objective)


def hosts_of(result: PlacementResult, *groups: str) -> list[str]:
    """One host per unit of `groups` (the unit's server, or its only node)."""
    return [a.host for a in result.assignments if a.group in groups and a.part in (None, "server")]


def zones_of(result: PlacementResult, *groups: str) -> list[str]:
    return [a.zone for a in result.assignments if a.group in groups and a.part in (None, "server")]


def per_domain(names: list[str], domains: list[str]) -> list[int]:
    count = Counter(names)
    return [count.get(d, 0) for d in domains]


HOSTS = [h.name for h in INV.hosts]
ZONES = list(INV.zones)


def assert_valid(
    spec: ClusterSpec,
    result: PlacementResult,
    inv: Inventory = INV,
    used: dict[str, Demand] | None = None,
    existing: dict[str, str] | None = None,
) -> None:
    assert result.feasible, result.reasons
    assert verify_placement(spec, inv, result.hosts, used).hard_violations == ()
    assert check_placement(spec, inv, result.hosts, used, existing) == []


# -- hard rules that hold -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    spec: ClusterSpec
    holds: Callable[[PlacementResult], bool]
    soft_violations: int = 0


HOLDS = [
    Case(
        "host affinity keeps a group's units on one host",
        cluster(group("web", count=3), rules=(rule("together", "affinity", "web"),)),
        lambda r: len(set(hosts_of(r, "web"))) == 1,
    ),
    Case(
        "host affinity over two groups",
        cluster(
            group("web", count=2),
            group("cache", "m1.medium", count=2),
            rules=(rule("together", "affinity", "web", "cache"),),
        ),
        lambda r: len(set(hosts_of(r, "web", "cache"))) == 1,
    ),
    Case(
        "the parts of a unit share a host",
        cluster(group("db", "m1.large", count=3, volume=200)),
        lambda r: all(r.hosts[f"db-{i}-server"] == r.hosts[f"db-{i}-data"] for i in (1, 2, 3)),
    ),
    Case(
        "host affinity with one part of a unit and an instance",
        cluster(
            group("db", count=2, volume=100),
            rules=(rule("near", "affinity", "db/data", "bastion"),),
            instances=(Instance("bastion", ServerProfile(FLAVOR["m1.tiny"], CIRROS)),),
        ),
        lambda r: len({r.hosts["db-1-data"], r.hosts["db-2-data"], r.hosts["bastion"]}) == 1,
    ),
    Case(
        "zone affinity: one zone, more than one host (24 vcpus of m1.large)",
        cluster(
            group("web", "m1.large", count=4),
            group("db", "m1.large", count=2),
            rules=(rule("one-zone", "affinity", "web", "db", scope="zone"),),
        ),
        lambda r: (
            len(set(zones_of(r, "web", "db"))) == 1 and len(set(hosts_of(r, "web", "db"))) > 1
        ),
    ),
    Case(
        "anti-affinity host, max 1",
        cluster(
            group("web", count=6),
            rules=(rule("apart", "anti-affinity", "web"),),
            objective=Objective.PACK,
        ),
        lambda r: len(set(hosts_of(r, "web"))) == 6,
    ),
    Case(
        "anti-affinity host, max 2",
        cluster(
            group("web", count=12),
            rules=(rule("apart", "anti-affinity", "web", max_per_domain=2),),
            objective=Objective.PACK,
        ),
        lambda r: per_domain(hosts_of(r, "web"), HOSTS) == [2] * 6,
    ),
    Case(
        "anti-affinity zone, max 1",
        cluster(
            group("db", "m1.large", count=2, volume=100),
            rules=(rule("db-apart", "anti-affinity", "db", scope="zone"),),
            objective=Objective.PACK,
        ),
        lambda r: sorted(zones_of(r, "db")) == ZONES,
    ),
    Case(
        "anti-affinity zone, max 2",
        cluster(
            group("db", count=4),
            rules=(rule("db-apart", "anti-affinity", "db", scope="zone", max_per_domain=2),),
            objective=Objective.PACK,
        ),
        lambda r: per_domain(zones_of(r, "db"), ZONES) == [2, 2],
    ),
    Case(
        "spread over zones, max skew 1, even when packing",
        cluster(
            group("web", count=5),
            rules=(rule("even", "spread", "web", scope="zone"),),
            objective=Objective.PACK,
        ),
        lambda r: sorted(per_domain(zones_of(r, "web"), ZONES)) == [2, 3],
    ),
    Case(
        "spread over zones, max skew 2",
        cluster(
            group("web", count=4),
            rules=(rule("even", "spread", "web", scope="zone", max_skew=2),),
            objective=Objective.PACK,
        ),
        lambda r: max(c := per_domain(zones_of(r, "web"), ZONES)) - min(c) <= 2,
    ),
    Case(
        "spread over hosts, max skew 1",
        cluster(
            group("web", count=8), rules=(rule("even", "spread", "web"),), objective=Objective.PACK
        ),
        lambda r: sorted(per_domain(hosts_of(r, "web"), HOSTS)) == [1, 1, 1, 1, 2, 2],
    ),
    Case(
        "spread over the zones its members may use (node-group zones)",
        cluster(
            group("web", count=4, zones=("az2",)),
            rules=(rule("even", "spread", "web"),),
            objective=Objective.PACK,
        ),
        lambda r: (
            (c := per_domain(hosts_of(r, "web"), HOSTS))[:3] == [0, 0, 0]
            and sorted(c[3:]) == [1, 1, 2]
        ),
    ),
    Case(
        # Regression: the spread filter once compared each count with the *current* minimum,
        # so az1 could not take its second member before az2 had its first; the exact search
        # then "proved" this infeasible.
        "spread where some members are confined to one zone",
        cluster(
            group("a", count=2, zones=("az1",)),
            group("b", count=1),
            rules=(rule("even", "spread", "a", "b", scope="zone"),),
        ),
        lambda r: per_domain(zones_of(r, "a", "b"), ZONES) == [2, 1],
    ),
    Case(
        "node-group zones",
        cluster(group("web", count=4, zones=("az2",)), group("db", count=2, zones=("az1",))),
        lambda r: set(zones_of(r, "web")) == {"az2"} and set(zones_of(r, "db")) == {"az1"},
    ),
    Case(
        "instance zone",
        cluster(instances=(Instance("vault", VolumeProfile(300), zone="az2"),)),
        lambda r: r.hosts["vault"].startswith("az2-"),
    ),
    Case(
        "soft affinity honoured when there is room",
        cluster(group("web", count=3), rules=(rule("near", "soft-affinity", "web"),)),
        lambda r: len(set(hosts_of(r, "web"))) == 1,
    ),
    Case(
        "soft affinity counted when there is no room (3 x 8 vcpus on 16-vcpu hosts)",
        cluster(group("web", "m1.xlarge", count=3), rules=(rule("near", "soft-affinity", "web"),)),
        lambda r: len(set(hosts_of(r, "web"))) == 2,
        soft_violations=1,
    ),
    Case(
        "soft anti-affinity honoured when there is room, even when packing",
        cluster(
            group("web", count=4),
            rules=(rule("apart", "soft-anti-affinity", "web"),),
            objective=Objective.PACK,
        ),
        lambda r: len(set(hosts_of(r, "web"))) == 4,
    ),
    Case(
        "soft anti-affinity at zone scope",
        cluster(
            group("web", count=2),
            rules=(rule("apart", "soft-anti-affinity", "web", scope="zone"),),
            objective=Objective.PACK,
        ),
        lambda r: sorted(zones_of(r, "web")) == ZONES,
    ),
    Case(
        "soft anti-affinity counted when there are too few hosts (8 on 6)",
        cluster(group("web", count=8), rules=(rule("apart", "soft-anti-affinity", "web"),)),
        lambda r: len(set(hosts_of(r, "web"))) == 6,
        soft_violations=2,
    ),
]


@pytest.mark.parametrize("case", HOLDS, ids=[c.id for c in HOLDS])
def test_rule_holds(case: Case) -> None:
    result = solve(case.spec, INV)
    assert_valid(case.spec, result)
    assert case.holds(result), result.hosts
    assert sum(v.count for v in result.soft_violations) == case.soft_violations
    if case.soft_violations:
        assert all(v.message.startswith("grouping ") for v in result.soft_violations)


# -- objectives ---------------------------------------------------------------------------------


def test_pack_uses_the_fewest_hosts_and_spread_uses_them_all() -> None:
    base = cluster(group("web", count=6), group("db", "m1.large", count=2, volume=100))
    packed = solve(base, INV, objective=Objective.PACK)
    spread = solve(base, INV, objective=Objective.SPREAD)
    assert_valid(base, packed)
    assert_valid(base, spread)
    assert len(set(packed.hosts.values())) == cpsat_min_hosts(base, INV) == 1
    assert len(set(spread.hosts.values())) == 6
    assert packed.objective == "pack" and spread.objective == "spread"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_benchmark_pack_cases_are_feasible_and_never_beat_the_optimum(seed: int) -> None:
    spec, inv = small_pack_case(seed)
    assert small_pack_case(seed) == (spec, inv)  # the same case every time
    result = solve(spec, inv, objective=Objective.PACK)
    assert_valid(spec, result, inv=inv)
    fewest = cpsat_min_hosts(spec, inv)
    assert fewest is not None
    assert len(set(result.hosts.values())) >= fewest


def test_the_objective_defaults_to_the_clusters_own() -> None:
    spec = cluster(group("web", count=3), objective=Objective.PACK)
    assert solve(spec, INV).objective == "pack"


# -- what exists and what others use ------------------------------------------------------------


def test_scale_out_moves_nothing() -> None:
    small = cluster(
        group("web", count=3, volume=100), rules=(rule("apart", "anti-affinity", "web"),)
    )
    first = solve(small, INV)
    assert_valid(small, first)
    big = replace(small, node_groups=(replace(small.node_groups[0], count=5),))
    second = solve(big, INV, existing=first.hosts, seed=3)
    assert_valid(big, second, existing=first.hosts)
    for node, host in first.hosts.items():
        assert second.hosts[node] == host
    assert {a.node for a in second.assignments if a.existing} == set(first.hosts)
    assert len(set(hosts_of(second, "web"))) == 5


def test_existing_nodes_stay_even_where_the_objective_would_not_put_them() -> None:
    spec = cluster(group("web", count=3), objective=Objective.PACK)
    existing = {"web-1": "az2-host3"}
    result = solve(spec, INV, existing=existing)
    assert_valid(spec, result, existing=existing)
    assert result.hosts["web-1"] == "az2-host3"


def test_used_capacity_is_respected() -> None:
    # Others take all but 2 vcpus of every az1 host: the m1.large units must go to az2.
    used = {h.name: Demand(vcpus=h.vcpus - 2) for h in INV.hosts if h.zone == "az1"}
    spec = cluster(group("db", "m1.large", count=3), group("web", "m1.small", count=6))
    result = solve(spec, INV, used=used)
    assert_valid(spec, result, used=used)
    assert set(zones_of(result, "db")) == {"az2"}
    for host in used:
        assert per_domain(hosts_of(result, "web", "db"), [host]) <= [2]


# -- infeasible, explained in the user's names --------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    id: str
    spec: ClusterSpec
    reason: str
    """Text the first reason must contain."""
    inventory: Inventory = INV
    existing: dict[str, str] = field(default_factory=dict)
    used: dict[str, Demand] = field(default_factory=dict)


REFUSALS = [
    Refusal(
        "zone anti-affinity needs more zones than exist",
        cluster(
            group("db", "m1.large", count=3),
            rules=(rule("db-spread", "anti-affinity", "db", scope="zone"),),
        ),
        "grouping db-spread (anti-affinity, zone) needs 3 zones with room for m1.large; "
        "only az1 and az2 have room",
    ),
    Refusal(
        "zone anti-affinity of server+volume units",
        cluster(
            group("db", "m1.large", count=3, volume=100),
            rules=(rule("db-spread", "anti-affinity", "db", scope="zone"),),
        ),
        "grouping db-spread (anti-affinity, zone) needs 3 zones with room for m1.large with a "
        "100 GiB volume; only az1 and az2 have room",
    ),
    Refusal(
        "host anti-affinity, 7 on 6 hosts",
        cluster(group("web", count=7), rules=(rule("apart", "anti-affinity", "web"),)),
        "grouping apart (anti-affinity, host) needs 7 hosts with room for m1.small; "
        "only 6 have room",
    ),
    Refusal(
        "capacity shortfall",
        cluster(group("web", "m1.xlarge", count=13)),
        "the cluster needs 104 vcpus but only 96 are free in az1, az2",
    ),
    Refusal(
        "an affinity group larger than any host",
        cluster(group("web", "m1.xlarge", count=3), rules=(rule("together", "affinity", "web"),)),
        "node web-1 and 2 node(s) tied to it (m1.xlarge + m1.xlarge + m1.xlarge) fits on no "
        "host: it needs 24 vcpus",
    ),
    Refusal(
        "a node larger than any host in its zone",
        cluster(group("db", "m1.xlarge", count=1, zones=("az1",))),
        "node db-1 (m1.xlarge) fits on no host in az1: it needs 8 vcpus",
        used={h.name: Demand(vcpus=12) for h in INV.hosts},
    ),
    Refusal(
        "anti-affinity between members that affinity ties together",
        cluster(
            group("web", count=3),
            rules=(
                rule("together", "affinity", "web"),
                rule("pairs", "anti-affinity", "web", max_per_domain=2),
            ),
        ),
        "grouping pairs (anti-affinity, host, max 2 per host) allows 2 member(s) per host, "
        "but affinity ties 3 of its members together",
    ),
    Refusal(
        "existing nodes already break a newly added rule",
        cluster(group("web", count=2), rules=(rule("apart", "anti-affinity", "web"),)),
        "grouping apart (anti-affinity, host): 2 of its members already sit in host az1-host1",
        existing={"web-1": "az1-host1", "web-2": "az1-host1"},
    ),
    Refusal(
        "an existing node outside the zones its group now allows",
        cluster(group("web", count=2, zones=("az2",))),
        "node web-1 may only be in az2, but web-1 already sits on host az1-host1 in az1",
        existing={"web-1": "az1-host1"},
    ),
    Refusal(
        "a host others already overfill",
        cluster(group("web", count=1)),
        "host az1-host2 is already over capacity on vcpus: existing nodes and other users "
        "take 20 of 16",
        used={"az1-host2": Demand(vcpus=20)},
    ),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[c.id for c in REFUSALS])
def test_infeasible_with_a_readable_reason(case: Refusal) -> None:
    result = solve(case.spec, case.inventory, existing=case.existing, used=case.used)
    assert not result.feasible
    assert not result.assignments
    assert case.reason in result.reasons[0], result.reasons
    oracle = cpsat_place(case.spec, case.inventory, existing=case.existing, used=case.used)
    assert oracle.status == "infeasible"


def test_pinned_units_still_answer_to_zone_rules() -> None:
    # Regression: the exact search tried a pinned unit's host without the zone filters, so it
    # "placed" web-2 next to web-1 and broke the spread; solve then raised AssertionError.
    spec = cluster(
        group("web", count=2),
        rules=(rule("together", "affinity", "web"), rule("even", "spread", "web", scope="zone")),
    )
    result = solve(spec, INV, existing={"web-1": "az1-host1"})
    assert not result.feasible
    assert "spread" in " ".join(result.reasons)


# -- greedy dead ends -----------------------------------------------------------------------------


def _flavor(vcpus: int) -> Flavor:
    return Flavor(f"c{vcpus}", f"c{vcpus}", vcpus=vcpus, ram_mb=1024 * vcpus, disk_gb=1)


BIN_FLAVORS = tuple(_flavor(v) for v in (3, 4, 5))
BINS = Inventory(
    hosts=tuple(Host(f"n{i}", "z1", 10, 10240, 100, 0) for i in (1, 2)),
    flavors=BIN_FLAVORS,
    images=DEFAULT_IMAGES,
)


def bins(*rules: Grouping) -> ClusterSpec:
    """Units of 5, 5, 4, 3, 3 vcpus for two hosts of 10: only {5, 5} | {4, 3, 3} fits."""

    def servers(name: str, f: Flavor, count: int) -> NodeGroup:
        return NodeGroup(name, (UnitPart(None, ServerProfile(f, CIRROS)),), count=count)

    c3, c4, c5 = BIN_FLAVORS
    return ClusterSpec(
        "bins",
        node_groups=(servers("big", c5, 2), servers("mid", c4, 1), servers("small", c3, 2)),
        groupings=rules,
    )


def test_the_exact_fallback_finds_what_greedy_misses() -> None:
    # Spreading greedily (emptiest host first, biggest first) puts 5 | 5, then 4 | 3, and the
    # last 3 fits nowhere; the ties fall the same way on every retry.
    spec = bins()
    result = solve(spec, BINS, objective=Objective.SPREAD)
    assert_valid(spec, result, inv=BINS)
    assert result.solver in ("cpsat-repair", "cpsat", "greedy-retry")
    assert result.hosts["big-1"] == result.hosts["big-2"]
    # Packing (fullest host first) gets there alone.
    assert solve(spec, BINS, objective=Objective.PACK).solver == "greedy"


def test_the_exact_search_proves_what_greedy_cannot() -> None:
    # Keeping the 5s apart leaves {5, 4} | {5, 3} and a 3 with nowhere to go. No precheck sees
    # it (2 hosts for 2 members; 20 vcpus for 20), so the exact method must prove it.
    spec = bins(rule("apart", "anti-affinity", "big"))
    result = solve(spec, BINS)
    assert not result.feasible
    assert result.status is PlacementStatus.INFEASIBLE
    assert result.solver == "cpsat"
    assert result.reasons[0].startswith("no placement satisfies every rule (proven by CP-SAT")
    assert "could not be placed" in result.reasons[1]
    assert cpsat_place(spec, BINS).status == "infeasible"


# -- determinism ----------------------------------------------------------------------------------

_SOFT_AFFINITY_SCALE_OUT = """
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, default_inventory
from shoal.model.cluster import ClusterSpec, Grouping, MemberRef, NodeGroup, UnitPart
from shoal.model.enums import Rule, Scope
from shoal.model.profile import ServerProfile
from shoal.placement import solve
INV = default_inventory()
web = NodeGroup("web", (UnitPart(None, ServerProfile(CLASSIC_FLAVORS[1], CIRROS)),), count=7)
near = Grouping("near", (MemberRef("web"),), Rule.SOFT_AFFINITY, Scope.HOST)
spec = ClusterSpec("t", node_groups=(web,), groupings=(near,))
existing = {"web-1": "az1-host1", "web-2": "az1-host2", "web-3": "az1-host3",
            "web-4": "az2-host1", "web-5": "az2-host2", "web-6": "az2-host3"}
print(solve(spec, INV, existing=existing).hosts["web-7"])
"""


def test_soft_affinity_with_existing_members_is_the_same_in_every_process() -> None:
    # Regression: existing members were counted in set order, which follows string hashing,
    # so a new member's host changed from process to process.
    seen = set()
    for hash_seed in ("0", "1", "2", "3", "4", "5"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(ROOT / "src"))
        out = subprocess.run(
            [sys.executable, "-c", _SOFT_AFFINITY_SCALE_OUT],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        seen.add(out.stdout.strip())
    assert len(seen) == 1, seen


def test_verifier_reads_hosts_in_node_order_as_by_name() -> None:
    """The solver hands the verifier each node's host in the order of the nodes: the same
    verdict as by name, for a placement that keeps the rules and for one that breaks them."""
    anti = Grouping("anti", (MemberRef("web"),), Rule.ANTI_AFFINITY, Scope.HOST)
    spec = ClusterSpec("c", node_groups=(group("web", count=4),), groupings=(anti,))
    nodes = expand(spec)
    good = solve(spec, INV).hosts
    bad = {n.name: HOSTS[0] for n in nodes}
    for hosts in (good, bad):
        in_order = [hosts[n.name] for n in nodes]
        assert verify_placement(spec, INV, in_order, None, nodes) == verify_placement(
            spec, INV, hosts
        )
    assert verify_placement(spec, INV, bad).hard_violations

"""Alike units placed group by group (`placement/batch.py`) answer what the greedy answers.

The fast path is only a faster way to the same placement: on random clusters it takes
(groups, instances, hard anti-affinity per host or zone, zone spreads, narrowed zones, other
tenants' usage, tight inventories) it must place every unit on the very host the general
greedy (`greedy.greedy` over `build_problem`) picks, and find no host exactly where the greedy
finds none, so that the solver's fallback to the general pipeline (retries, the exact method)
decides those. The shapes it does not take answer None.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoal.model.catalogs import CLASSIC_FLAVORS, DEFAULT_IMAGES
from shoal.model.cluster import ClusterSpec, Grouping, Instance, MemberRef, NodeGroup
from shoal.model.enums import Objective, Rule, Scope
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, expand
from shoal.placement import solve, verify_placement
from shoal.placement.batch import place_alike
from shoal.placement.explain import prechecks
from shoal.placement.greedy import greedy
from shoal.placement.problem import build_problem
from tests.oracle import cpsat_place
from tests.placement.strategies import (
    Case,
    Chooser,
    DrawChooser,
    RandomChooser,
    gen_groups,
    gen_inventory,
    gen_used,
    random_case,
    subset,
)


def _groupings(c: Chooser, groups: list[NodeGroup], instances: list[Instance]) -> list[Grouping]:
    """Only the rules the fast path takes: anti-affinity (host or zone) and zone spread."""
    targets = [g.name for g in groups] + [i.name for i in instances]
    out: list[Grouping] = []
    for k in range(c.int(0, 4)):
        kind = c.pick(("anti-host", "anti-zone", "spread"))
        refs = tuple(MemberRef(t) for t in subset(c, targets, nonempty=True))
        if kind == "spread":
            g = Grouping(f"r{k}", refs, Rule.SPREAD, Scope.ZONE, max_skew=c.int(1, 2))
        else:
            scope = Scope.HOST if kind == "anti-host" else Scope.ZONE
            g = Grouping(f"r{k}", refs, Rule.ANTI_AFFINITY, scope, max_per_domain=c.int(1, 3))
        out.append(g)
    return out


def alike_case(c: Chooser) -> Case:
    zones = tuple(f"az{z}" for z in range(1, c.int(1, 4) + 1))
    groups, instances = gen_groups(c, zones)
    spec = ClusterSpec(
        "alike",
        node_groups=tuple(groups),
        instances=tuple(instances),
        groupings=tuple(_groupings(c, groups, instances)),
    )
    need = sum((n.demand for n in expand(spec)), Demand())
    hosts = gen_inventory(c, zones, need)
    inv = Inventory(hosts=tuple(hosts), flavors=CLASSIC_FLAVORS, images=DEFAULT_IMAGES)
    used = {h: d for h, d in gen_used(c, hosts).items() if c.chance(0.8)}
    return Case(spec, inv, {}, used, seed=c.int(0, 3))


@st.composite
def alike_cases(draw: Any) -> Case:
    return alike_case(DrawChooser(draw))


def _same_as_greedy(case: Case) -> bool:
    """Assert the fast path's answer is the greedy's; whether it placed everything."""
    alike = place_alike(case.spec, case.inventory, case.used, Objective.SPREAD, case.seed)
    problem = build_problem(case.spec, case.inventory, {}, case.used)
    if alike is None:
        # Only what the general path must word: a host already over capacity, no zone
        # shared by a unit's parts. The generator makes nothing else it does not take.
        over = any(min(f) < 0 for f in problem.base_free)
        assert over or problem.reasons, case
        return False
    assert not problem.reasons
    outcome = greedy(problem, Objective.SPREAD, case.seed)
    assert alike.complete == (outcome.failed is None), case
    if alike.complete:
        assert alike.host_of == outcome.state.host_of, case
    return alike.complete


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alike_cases())
def test_alike_units_go_where_the_greedy_puts_them(case: Case) -> None:
    _same_as_greedy(case)


@pytest.mark.parametrize("chunk", range(4))
def test_seeded_sweep_same_hosts_as_the_greedy(chunk: int) -> None:
    placed = 0
    for seed in range(chunk * 250, chunk * 250 + 250):
        placed += _same_as_greedy(alike_case(RandomChooser(seed)))
    assert placed > 50  # the sweep reaches placements, not only refusals


def test_every_shape_of_the_random_cases_it_takes() -> None:
    """The general generator's cases (every rule, existing nodes) where the path applies."""
    taken = 0
    for seed in range(600):
        case = random_case(seed)
        if case.existing:
            continue
        if place_alike(case.spec, case.inventory, case.used, Objective.SPREAD, case.seed):
            taken += 1
            _same_as_greedy(case)
    assert taken > 50


def test_solve_answers_the_greedys_hosts_node_by_node() -> None:
    for seed in range(200):
        case = alike_case(RandomChooser(seed))
        problem = build_problem(case.spec, case.inventory, {}, case.used)
        outcome = greedy(problem, Objective.SPREAD, case.seed)
        if problem.reasons or prechecks(problem) or outcome.failed is not None:
            continue  # refused before the greedy, or left to the exact method
        names = [h.name for h in case.inventory.hosts]
        want = {
            n.name: names[outcome.state.host_of[it.index]] for it in problem.items for n in it.nodes
        }
        result = solve(case.spec, case.inventory, used=case.used, seed=case.seed)
        assert result.feasible and result.solver == "greedy"
        assert result.hosts == want
        check = verify_placement(case.spec, case.inventory, result.hosts, case.used)
        assert not check.hard_violations


def test_a_unit_with_no_host_is_left_to_the_exact_method() -> None:
    """Where the fast path (as the greedy) finds no host for a unit, the cluster is not
    refused for it: the general pipeline runs, and places every cluster the independent
    CP-SAT oracle places."""
    dead_ends = rescued = 0
    for seed in range(1500):
        case = alike_case(RandomChooser(seed))
        alike = place_alike(case.spec, case.inventory, case.used, Objective.SPREAD, case.seed)
        if alike is None or alike.complete:
            continue
        dead_ends += 1
        result = solve(case.spec, case.inventory, used=case.used, seed=case.seed)
        oracle = cpsat_place(case.spec, case.inventory, used=case.used)
        if oracle.status == "feasible":
            assert result.feasible, seed
            assert not verify_placement(
                case.spec, case.inventory, result.hosts, case.used
            ).hard_violations
            rescued += 1
        elif oracle.status == "infeasible":
            assert not result.feasible, seed
    assert dead_ends > 100 and rescued > 10  # both kinds of dead end are reached


@pytest.mark.parametrize(
    "change",
    [
        "pack",
        "affinity",
        "soft",
        "host-spread",
        "over-capacity",
    ],
)
def test_shapes_it_leaves_to_the_general_path(change: str) -> None:
    case = alike_case(RandomChooser(7))
    spec, used, objective = case.spec, dict(case.used), Objective.SPREAD
    refs = (MemberRef(spec.node_groups[0].name),)
    if change == "pack":
        objective = Objective.PACK
    elif change == "affinity":
        spec = replace(spec, groupings=(Grouping("x", refs, Rule.AFFINITY, Scope.ZONE),))
    elif change == "soft":
        spec = replace(spec, groupings=(Grouping("x", refs, Rule.SOFT_ANTI_AFFINITY),))
    elif change == "host-spread":
        spec = replace(spec, groupings=(Grouping("x", refs, Rule.SPREAD, Scope.HOST),))
    else:
        h = case.inventory.hosts[0]
        used = {h.name: Demand(h.vcpus + 1, 0, 0, 0)}
    assert place_alike(spec, case.inventory, used, objective, 0) is None

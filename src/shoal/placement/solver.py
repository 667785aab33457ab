"""`solve`: the whole placement pipeline, wired in one place.

Order and why: build the problem (contradictions found there need no search); prechecks (cheap
proofs of infeasibility with the clearest messages); greedy (fast, places nearly everything);
a few perturbed greedy retries (ties broken differently escape most dead ends); then the exact
method (`complete`: CP-SAT on the part greedy missed, or on independent parts whole) within a
time limit, which places, proves infeasible, or leaves the answer undecided. With objective
`pack` on small problems CP-SAT also minimises the hosts used. The result is then checked by
`verify_placement`, which shares no code with the search.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from shoal.model.cluster import ClusterSpec
from shoal.model.enums import Objective
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, NodeSpec, expand
from shoal.model.profile import ServerProfile
from shoal.placement.batch import Alike, place_alike
from shoal.placement.complete import complete
from shoal.placement.cpsat import ExactVerdict, solve_exact
from shoal.placement.explain import diagnose, prechecks
from shoal.placement.greedy import greedy
from shoal.placement.problem import PlacementProblem, build_problem
from shoal.placement.result import Assignment, PlacementResult
from shoal.placement.state import SearchState
from shoal.placement.verify import verify_placement
from shoal.placement.workloads.level import second_level
from shoal.telemetry import metrics

GREEDY_RETRIES = 4
# Retries cost a full greedy pass each; skip them on large problems.
RETRY_MAX_ITEMS = 2_000
DEFAULT_TIME_LIMIT_S = 10.0
"""How long the exact method may take to place or disprove what greedy could not."""
# `pack` asks CP-SAT for the fewest hosts when the problem is at most this big (items x
# hosts), within this much of CP-SAT's deterministic time (about seconds; the same answer
# on a busy machine as on an idle one).
PACK_MAX_PAIRS = 5_000
PACK_DETERMINISTIC_S = 2.0

_limits = {"time_limit_s": DEFAULT_TIME_LIMIT_S}


def configure(*, time_limit_s: float) -> None:
    """Set this process's default exact-method time limit (the server does, from settings)."""
    if time_limit_s <= 0:
        raise ValueError("time_limit_s must be positive")
    _limits["time_limit_s"] = time_limit_s


def solve(
    spec: ClusterSpec,
    inventory: Inventory,
    *,
    existing: Mapping[str, str] | None = None,
    used: Mapping[str, Demand] | None = None,
    objective: Objective | None = None,
    seed: int = 0,
    time_limit_s: float | None = None,
    replicas: Mapping[str, str] | None = None,
    workloads: bool = True,
    nodes: list[NodeSpec] | None = None,
) -> PlacementResult:
    """Place every node of `spec` on `inventory`, or explain why that cannot be done.

    Then, when `spec` has workloads, every replica on the placed servers (the second level,
    `placement/workloads/`; `replicas` maps running ones to their servers): a cluster whose
    replicas cannot all be placed is refused as a whole, with the reasons.

    `existing` maps nodes that already exist to their hosts (they never move); `used` is capacity
    taken on hosts by everything else. Deterministic for a given `seed` (an answer the exact
    method reaches within `time_limit_s` on an idle machine may be undecided on a busy one).
    `nodes`: `expand(spec)` when the caller has it already (issue 23: not made twice).
    """
    limit = time_limit_s if time_limit_s is not None else _limits["time_limit_s"]
    started = time.perf_counter()
    result = _solve(spec, inventory, existing, used, objective, seed, limit, nodes)
    if workloads and result.feasible and spec.workloads:
        result = second_level(spec, result, replicas or {}, limit)
    metrics.placed(str(result.status), time.perf_counter() - started)  # issue 27
    return result


def _solve(
    spec: ClusterSpec,
    inventory: Inventory,
    existing: Mapping[str, str] | None,
    used: Mapping[str, Demand] | None,
    objective: Objective | None,
    seed: int,
    limit: float,
    nodes: list[NodeSpec] | None = None,
) -> PlacementResult:
    started = time.perf_counter()
    existing = dict(existing or {})
    objective = objective or spec.objective
    if not existing:
        # A new cluster: alike units placed group by group (`batch.py`), the general
        # pipeline only when that path does not apply or finds no host for a unit.
        nodes = expand(spec) if nodes is None else nodes
        alike = place_alike(spec, inventory, used or {}, objective, seed)
        if alike is not None and alike.complete:
            fast = _alike_result(spec, inventory, alike, nodes, used, objective, started)
            if fast is not None:
                return fast
    problem = build_problem(spec, inventory, existing, used or {}, nodes)
    stats: dict[str, object] = {"items": len(problem.items), "hosts": len(inventory.hosts)}

    def infeasible(reasons: list[str], solver: str) -> PlacementResult:
        stats["seconds"] = round(time.perf_counter() - started, 6)
        return PlacementResult(
            feasible=False,
            reasons=tuple(reasons),
            solver=solver,
            objective=str(objective),
            stats=dict(stats),
        )

    if problem.reasons:
        return infeasible(problem.reasons, "precheck")
    early = prechecks(problem)
    if early:
        return infeasible(early, "precheck")

    outcome = greedy(problem, objective, seed)
    first_failure = outcome
    solver = "greedy"
    if outcome.failed is not None and len(problem.items) <= RETRY_MAX_ITEMS:
        for attempt in range(1, GREEDY_RETRIES + 1):
            outcome = greedy(problem, objective, seed + attempt, shuffle=True)
            if outcome.failed is None:
                solver = "greedy-retry"
                break
    state: SearchState = outcome.state
    if outcome.failed is None:
        if objective is Objective.PACK:
            return _fewest_hosts(problem, state, existing, used, solver, stats, started, limit)
        return _result(problem, state, existing, used, objective, solver, stats, started)
    assert first_failure.failed is not None
    why = diagnose(first_failure.state, first_failure.failed)
    done = complete(problem, objective, seed, limit)
    stats["exact_seconds"] = round(done.seconds, 6)
    if done.verdict is ExactVerdict.NONE_EXISTS:
        return infeasible(
            [
                f"no placement satisfies every rule (proven by CP-SAT for {done.detail}, "
                f"which shares no rule, zone block or zone with the rest)",
                why,
            ],
            "cpsat",
        )
    if done.verdict is ExactVerdict.UNKNOWN:
        stats["seconds"] = round(time.perf_counter() - started, 6)
        return PlacementResult(
            feasible=False,
            undecided=True,
            reasons=(
                f"undecided: greedy could not place the cluster, and the exact method found "
                f"no placement and no proof that none exists within {limit:g} s",
                why,
            ),
            solver="cpsat",
            objective=str(objective),
            stats=dict(stats),
        )
    return _result(problem, done.state, existing, used, objective, done.solver, stats, started)


def _alike_result(
    spec: ClusterSpec,
    inv: Inventory,
    alike: Alike,
    nodes: list[NodeSpec],
    used: Mapping[str, Demand] | None,
    objective: Objective,
    started: float,
) -> PlacementResult | None:
    """`_result` for `place_alike`'s answer: each node's assignment, read group by group
    with the nodes in order; None if the nodes are not the looks' in order (a caller's own
    list), so the general pipeline answers."""
    where = [(h.name, h.zone) for h in inv.hosts]
    roles = {g.name: g.role for g in spec.node_groups}
    host_of = alike.host_of
    assignments: list[Assignment] = []
    placed: list[str] = []
    make = tuple.__new__  # as in `_result`: no Python `__new__` call per node
    pos, total = 0, len(nodes)
    for look in alike.looks:
        role = roles.get(look.name)
        parts = [
            (
                part,
                str(profile.kind),
                profile.flavor.name if isinstance(profile, ServerProfile) else None,
            )
            for part, profile, _ in look.parts
        ]
        if pos + look.units * len(parts) > total:
            return None
        name = look.name
        for u in range(look.first, look.first + look.units):
            host, zone = where[host_of[u]]
            for part, kind, flavor in parts:
                n = nodes[pos]
                pos += 1
                if n.group != name or n.part != part:
                    return None
                placed.append(host)
                assignments.append(
                    make(Assignment, (n.name, kind, name, part, role, flavor, zone, host, False))
                )
    if pos != total:
        return None
    stats: dict[str, object] = {"items": len(host_of), "hosts": len(inv.hosts)}
    return _checked(
        spec, inv, assignments, placed, used, nodes, objective, "greedy", stats, started
    )


def _fewest_hosts(
    problem: PlacementProblem,
    state: SearchState,
    existing: dict[str, str],
    used: Mapping[str, Demand] | None,
    solver: str,
    stats: dict[str, object],
    started: float,
    limit: float,
) -> PlacementResult:
    """Greedy's packing, or CP-SAT's with fewer hosts and no more soft-rule breaks."""
    mine = _result(problem, state, existing, used, Objective.PACK, solver, stats, started)
    if len(problem.items) * len(problem.inventory.hosts) > PACK_MAX_PAIRS:
        return mine
    fresh = SearchState(problem)
    hint = {it.index: state.host_of[it.index] for it in problem.items}
    out = solve_exact(
        fresh,
        problem.items,
        limit,
        min_hosts=True,
        hint=hint,
        deterministic_s=PACK_DETERMINISTIC_S,
    )
    if out.verdict is not ExactVerdict.FOUND:
        return mine
    for i, h in sorted(out.host_of.items()):
        fresh.place(problem.items[i], h)
    theirs = _result(problem, fresh, existing, used, Objective.PACK, "cpsat-pack", stats, started)
    fewer = len(set(theirs.hosts.values())) < len(set(mine.hosts.values()))
    soft = sum(v.count for v in theirs.soft_violations) <= sum(
        v.count for v in mine.soft_violations
    )
    return theirs if fewer and soft else mine


def _result(
    problem: PlacementProblem,
    state: SearchState,
    existing: dict[str, str],
    used: Mapping[str, Demand] | None,
    objective: Objective,
    solver: str,
    stats: dict[str, object],
    started: float,
) -> PlacementResult:
    inv = problem.inventory
    nodes = problem.nodes
    roles = {g.name: g.role for g in problem.spec.node_groups}
    # Each host's name and zone, as the pair an assignment takes.
    where = [(h.name, h.zone) for h in inv.hosts]
    # Replicas of one part share kind, role and flavor: worked out once per group and profile.
    looks: dict[tuple[str, int], tuple[str, str | None, str | None]] = {}

    def look_of(n: NodeSpec) -> tuple[str, str | None, str | None]:
        key = (n.group, id(n.profile))
        look = looks.get(key)
        if look is None:
            look = looks[key] = (str(n.kind), roles.get(n.group), n.flavor_name)
        return look

    # The items' nodes in item order are the cluster's nodes in order for a new cluster
    # without host affinity (each unit one item): then the assignments are made as the
    # items are read, with no lookup by name per node, and the verifier is given each
    # node's host in order (a dict by name of 100,000 nodes is memory traffic that grows
    # with the cluster). `pos` checks that, node by node.
    assignments: list[Assignment] = []
    placed: list[str] = []
    pos, in_order, total = 0, not existing, len(nodes)
    host_of = state.host_of
    # `Assignment(...)` runs the named tuple's `__new__`, a Python call per node.
    make = tuple.__new__
    # Consecutive nodes nearly always share group and profile: the last look is at hand.
    last_profile: object = None
    last_group = ""
    look: tuple[str, str | None, str | None] = ("", None, None)
    for item in problem.items if in_order else ():
        host, zone = where[host_of[item.index]]
        for n in item.nodes:
            if pos < total and nodes[pos] is n:
                pos += 1
                if n.profile is not last_profile or n.group is not last_group:
                    look = look_of(n)
                    last_profile, last_group = n.profile, n.group
                placed.append(host)
                assignments.append(
                    make(
                        Assignment,
                        (n.name, look[0], n.group, n.part, look[1], look[2], zone, host, False),
                    )
                )
            else:
                in_order = False
                break
        if not in_order:
            break
    answer: dict[str, str] | list[str] = placed
    if not in_order or pos != total:
        node_host = dict(existing)
        for item in problem.items:
            host = where[host_of[item.index]][0]
            for n in item.nodes:
                node_host[n.name] = host
        zone_of = {h.name: h.zone for h in inv.hosts}
        assignments = []
        for n in nodes:
            host = node_host[n.name]
            look = look_of(n)
            assignments.append(
                Assignment(
                    n.name,
                    look[0],
                    n.group,
                    n.part,
                    look[1],
                    look[2],
                    zone_of[host],
                    host,
                    n.name in existing,
                )
            )
        answer = node_host
    return _checked(
        problem.spec, inv, assignments, answer, used, nodes, objective, solver, stats, started
    )


def _checked(
    spec: ClusterSpec,
    inv: Inventory,
    assignments: list[Assignment],
    answer: dict[str, str] | list[str],
    used: Mapping[str, Demand] | None,
    nodes: list[NodeSpec],
    objective: Objective,
    solver: str,
    stats: dict[str, object],
    started: float,
) -> PlacementResult:
    """The placement, once the independent verifier has passed it."""
    check = verify_placement(spec, inv, answer, used, nodes)
    stats["seconds"] = round(time.perf_counter() - started, 6)
    if check.hard_violations:
        # A solver bug, never an expected outcome: say so loudly instead of returning it.
        raise AssertionError(f"solver broke hard rules: {check.hard_violations[:5]}")
    return PlacementResult(
        feasible=True,
        assignments=tuple(assignments),
        soft_violations=check.soft_violations,
        solver=solver,
        objective=str(objective),
        checks=check.checks,
        stats=dict(stats),
    )

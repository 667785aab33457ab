"""`solve`: the whole placement pipeline, wired in one place.

Order and why: build the problem (contradictions found there need no search); prechecks (cheap
proofs of infeasibility with the clearest messages); greedy (fast, places nearly everything);
a few perturbed greedy retries (ties broken differently escape most dead ends); an exact search
on small problems (finds what greedy missed, or proves nothing exists). The result is then
checked by `verify_placement`, which shares no code with the search.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from shoal.model.cluster import ClusterSpec
from shoal.model.enums import Objective
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand
from shoal.placement.exact import ExactVerdict, exact_search
from shoal.placement.explain import diagnose, prechecks
from shoal.placement.greedy import greedy
from shoal.placement.problem import PlacementProblem, build_problem
from shoal.placement.result import Assignment, PlacementResult
from shoal.placement.state import SearchState
from shoal.placement.verify import verify_placement

GREEDY_RETRIES = 4
# Exact search runs when the problem is at most this big (items x hosts).
EXACT_MAX_CELLS = 4_000
# Retries cost a full greedy pass each; skip them on large problems.
RETRY_MAX_ITEMS = 2_000


def solve(
    spec: ClusterSpec,
    inventory: Inventory,
    *,
    existing: Mapping[str, str] | None = None,
    used: Mapping[str, Demand] | None = None,
    objective: Objective | None = None,
    seed: int = 0,
    exact_budget: int | None = None,
) -> PlacementResult:
    """Place every node of `spec` on `inventory`, or explain why that cannot be done.

    `existing` maps nodes that already exist to their hosts (they never move); `used` is capacity
    taken on hosts by everything else. Deterministic for a given `seed`.
    """
    started = time.perf_counter()
    existing = dict(existing or {})
    objective = objective or spec.objective
    problem = build_problem(spec, inventory, existing, used or {})
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
    if outcome.failed is not None:
        assert first_failure.failed is not None
        why = diagnose(first_failure.state, first_failure.failed)
        if len(problem.items) * len(inventory.hosts) > EXACT_MAX_CELLS:
            return infeasible([why], "greedy")
        budget = exact_budget if exact_budget is not None else 200_000
        exact = exact_search(problem, objective, seed, budget)
        stats["exact_steps"] = exact.steps
        if exact.verdict is ExactVerdict.NONE_EXISTS:
            return infeasible(
                [
                    f"no placement satisfies every rule (exhaustive search, {exact.steps} steps)",
                    why,
                ],
                "exact",
            )
        if exact.verdict is ExactVerdict.GAVE_UP:
            return infeasible(
                [why, f"the exact search gave up after {exact.steps} steps without a placement"],
                "exact",
            )
        state, solver = exact.state, "exact"
    return _result(problem, state, existing, used, objective, solver, stats, started)


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
    node_host = dict(existing)
    for item in problem.items:
        host = inv.hosts[state.host_of[item.index]].name
        for n in item.nodes:
            node_host[n.name] = host
    zone_of = {h.name: h.zone for h in inv.hosts}
    roles = {g.name: g.role for g in problem.spec.node_groups}
    assignments = tuple(
        Assignment(
            node=n.name,
            kind=str(n.kind),
            group=n.group,
            part=n.part,
            role=roles.get(n.group),
            flavor=n.flavor_name,
            zone=zone_of[node_host[n.name]],
            host=node_host[n.name],
            existing=n.name in existing,
        )
        for n in problem.nodes
    )
    check = verify_placement(problem.spec, inv, node_host, used)
    stats["seconds"] = round(time.perf_counter() - started, 6)
    if check.hard_violations:
        # A solver bug, never an expected outcome: say so loudly instead of returning it.
        raise AssertionError(f"solver broke hard rules: {check.hard_violations[:5]}")
    return PlacementResult(
        feasible=True,
        assignments=assignments,
        soft_violations=check.soft_violations,
        solver=solver,
        objective=str(objective),
        checks=check.checks,
        stats=dict(stats),
    )

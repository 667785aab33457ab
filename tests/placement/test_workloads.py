"""The second level of placement (issue 22): replicas of workloads onto the cluster's servers.

The properties compare the solver with a brute-force search judged by a checker written here,
sharing no code with `shoal.placement.workloads`: whatever is placed keeps every rule, and a
refusal comes only when no assignment of replicas to servers keeps them all.
"""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from shoal.model.workloads import (
    Container,
    ContainerPort,
    NodeSelector,
    Workload,
    WorkloadRule,
    WorkloadRuleKind,
    WorkloadScope,
)
from shoal.placement.workloads import (
    NodeSlot,
    WorkloadPlacement,
    WorkloadRefusal,
    WorkloadRejectionKind,
    place_workloads,
)


def _dom(s: NodeSlot, scope: WorkloadScope) -> str:
    if scope is WorkloadScope.NODE:
        return s.node
    value = s.host if scope is WorkloadScope.HOST else s.zone
    return value or f"node:{s.node}"


def _ok(workloads: list[Workload], slots: list[NodeSlot], node_of: dict[str, str]) -> bool:
    """Every rule, from scratch."""
    by = {s.node: s for s in slots}
    on: dict[str, list[NodeSlot]] = {}
    for w in workloads:
        on[w.name] = [by[node_of[f"{w.name}-{i}"]] for i in range(1, w.replicas + 1)]
        for s in on[w.name]:
            if w.selector.groups and s.member not in w.selector.groups:
                return False
            if any(s.labels.get(k) != v for k, v in w.selector.labels.items()):
                return False
    for s in slots:
        here = [w for w in workloads for x in on[w.name] if x.node == s.node]
        if sum(c.cpu_milli for w in here for c in w.containers) > s.cpu_milli:
            return False
        if sum(c.memory_mb for w in here for c in w.containers) > s.memory_mb:
            return False
        bound = [p.port for w in here for c in w.containers for p in c.ports]
        bound += list(s.bound_ports)
        if len(bound) != len(set(bound)):
            return False
    for w in workloads:
        if w.max_per_node and max(Counter(x.node for x in on[w.name]).values()) > w.max_per_node:
            return False
        for r in w.rules:
            mine = Counter(_dom(x, r.scope) for x in on[w.name])
            if r.against:
                theirs = {_dom(x, r.scope) for x in on.get(r.against, [])}
                if r.rule is WorkloadRuleKind.ANTI_AFFINITY and set(mine) & theirs:
                    return False
                if r.rule is WorkloadRuleKind.AFFINITY and not set(mine) <= theirs:
                    return False
            elif r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                if max(mine.values()) > r.max_per_domain:
                    return False
            elif r.rule is WorkloadRuleKind.AFFINITY:
                if len(mine) > 1:
                    return False
            else:
                usable = {
                    _dom(s, r.scope)
                    for s in slots
                    if (not w.selector.groups or s.member in w.selector.groups)
                    and all(s.labels.get(k) == v for k, v in w.selector.labels.items())
                }
                counts = [mine.get(d, 0) for d in usable]
                if max(counts) - min(counts) > r.max_skew:
                    return False
    return True


def _brute(workloads: list[Workload], slots: list[NodeSlot]) -> bool:
    names = [f"{w.name}-{i}" for w in workloads for i in range(1, w.replicas + 1)]
    for combo in itertools.product([s.node for s in slots], repeat=len(names)):
        if _ok(workloads, slots, dict(zip(names, combo, strict=True))):
            return True
    return False


scopes = st.sampled_from(list(WorkloadScope))


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Workload], list[NodeSlot]]:
    n = draw(st.integers(1, 4))
    slots = [
        NodeSlot(
            f"n{i}",
            draw(st.sampled_from(["a", "b"])),
            draw(st.sampled_from([1000, 2000])),
            2048,
            host=f"h{draw(st.integers(0, 2))}",
            zone=f"z{draw(st.integers(0, 1))}",
            labels={"role": draw(st.sampled_from(["x", "y"]))},
            bound_ports=frozenset(draw(st.sets(st.sampled_from([80]), max_size=1))),
        )
        for i in range(n)
    ]
    count = draw(st.integers(1, 2))
    names = [f"w{j}" for j in range(count)]
    workloads = []
    budget = 5
    for name in names:
        replicas = draw(st.integers(1, min(3, budget - (count - len(workloads) - 1))))
        budget -= replicas
        rules = []
        for _ in range(draw(st.integers(0, 2))):
            kind = draw(st.sampled_from(list(WorkloadRuleKind)))
            against = None
            if kind is not WorkloadRuleKind.SPREAD and draw(st.booleans()):
                against = draw(st.sampled_from([x for x in names if x != name] or [None]))
            rules.append(
                WorkloadRule(
                    kind,
                    draw(scopes),
                    against,
                    max_per_domain=draw(st.integers(1, 2)),
                    max_skew=draw(st.integers(1, 2)),
                )
            )
        selector = NodeSelector(
            groups=tuple(draw(st.sets(st.sampled_from(["a", "b"]), max_size=1))),
            labels={"role": "x"} if draw(st.integers(0, 4)) == 0 else {},
        )
        ports = (ContainerPort(draw(st.sampled_from([80, 81]))),) if draw(st.booleans()) else ()
        container = Container(
            "c",
            "img",
            ports=ports,
            cpu_milli=draw(st.sampled_from([0, 500, 1000])),
            memory_mb=draw(st.sampled_from([0, 1024])),
        )
        workloads.append(
            Workload(
                name,
                (container,),
                replicas,
                rules=tuple(rules),
                max_per_node=draw(st.sampled_from([None, 1, 2])),
                selector=selector,
            )
        )
    return workloads, slots


@settings(max_examples=300, deadline=None)
@given(cases())
def test_placed_keeps_every_rule_and_refused_only_when_none_exists(
    case: tuple[list[Workload], list[NodeSlot]],
) -> None:
    workloads, slots = case
    answer = place_workloads(workloads, slots)
    if isinstance(answer, WorkloadPlacement):
        assert _ok(workloads, slots, dict(answer.node_of))
    else:
        assert not answer.undecided
        assert not _brute(workloads, slots), answer.reasons


def _w(name: str, replicas: int, *rules: WorkloadRule, port: int | None = None) -> Workload:
    ports = (ContainerPort(port),) if port else ()
    return Workload(
        name, (Container("c", "img", ports=ports, cpu_milli=500),), replicas, rules=rules
    )


SLOTS = [
    NodeSlot(f"ctl-{i}", "ctl", 2000, 4096, host=f"h{i}", zone=f"z{i % 3}") for i in range(1, 4)
]


def test_same_port_twice_on_a_node_is_refused_at_plan_time_naming_both() -> None:
    answer = place_workloads([_w("api", 2, port=8080), _w("web", 2, port=8080)], SLOTS)
    assert isinstance(answer, WorkloadRefusal)
    assert any("api and web" in r and "port 8080" in r for r in answer.reasons)


def test_anti_affinity_over_zone_refusal_names_the_rule_and_zones() -> None:
    rule = WorkloadRule(WorkloadRuleKind.ANTI_AFFINITY, WorkloadScope.ZONE)
    answer = place_workloads([_w("api", 4, rule)], SLOTS)
    assert isinstance(answer, WorkloadRefusal)
    assert "workload api's anti-affinity over zone" in answer.reasons[0]
    assert "z0, z1, z2" in answer.reasons[0]


def test_running_replicas_stay_where_they_are() -> None:
    existing = {"api-1": "ctl-3", "api-2": "ctl-2"}
    rule = WorkloadRule(WorkloadRuleKind.ANTI_AFFINITY, WorkloadScope.NODE)
    answer = place_workloads([_w("api", 3, rule)], SLOTS, existing)
    assert isinstance(answer, WorkloadPlacement)
    assert answer.node_of["api-1"] == "ctl-3" and answer.node_of["api-2"] == "ctl-2"
    assert answer.node_of["api-3"] == "ctl-1" and answer.moved == ()


def test_a_lost_node_moves_only_its_replicas() -> None:
    existing = {"api-1": "ctl-1", "api-2": "ctl-2"}
    answer = place_workloads([_w("api", 2)], SLOTS[1:], existing)
    assert isinstance(answer, WorkloadPlacement)
    assert answer.node_of["api-2"] == "ctl-2" and answer.moved == ("api-1",)


def test_exact_search_finds_what_greedy_misses() -> None:
    # greedy spreads the two small replicas over both servers (least loaded first), which
    # leaves no room for the big one; CP-SAT puts both small ones together
    slots = [NodeSlot("a", "g", 1000, 4096), NodeSlot("b", "g", 1000, 4096)]
    small = Workload("small", (Container("c", "i", cpu_milli=500),), 2)
    big = Workload("big", (Container("c", "i", cpu_milli=1000),), 1)
    answer = place_workloads([small, big], slots)
    assert isinstance(answer, WorkloadPlacement) and answer.method == "exact"
    assert answer.node_of["small-1"] == answer.node_of["small-2"] != answer.node_of["big-1"]


def test_rules_against_a_workload_scaled_to_zero() -> None:
    away = WorkloadRule(WorkloadRuleKind.ANTI_AFFINITY, WorkloadScope.NODE, against="db")
    near = WorkloadRule(WorkloadRuleKind.AFFINITY, WorkloadScope.NODE, against="db")
    # a tight case so greedy's answer is not the only path: three replicas, three servers
    placed = place_workloads([_w("api", 3, away, port=80), _w("db", 0)], SLOTS)
    assert isinstance(placed, WorkloadPlacement)
    refused = place_workloads([_w("api", 1, near), _w("db", 0)], SLOTS)
    assert isinstance(refused, WorkloadRefusal)
    assert "workload db has no replicas to be near" in refused.reasons[0]


def test_exact_search_answers_alone_the_same_on_a_zero_replica_peer() -> None:
    from shoal.placement.workloads.exact import Verdict, solve_exact

    away = WorkloadRule(WorkloadRuleKind.ANTI_AFFINITY, WorkloadScope.NODE, against="db")
    answer = solve_exact([_w("api", 2, away)], SLOTS, {})
    assert answer.verdict is Verdict.FOUND and len(answer.node_of) == 2


def test_a_refusal_is_typed_and_worded() -> None:
    rule = WorkloadRule(WorkloadRuleKind.ANTI_AFFINITY, WorkloadScope.ZONE)
    refused = place_workloads([_w("api", 5, rule)], SLOTS)
    assert isinstance(refused, WorkloadRefusal) and not refused.undecided
    (why,) = refused.rejections
    assert why.kind is WorkloadRejectionKind.TOO_FEW_DOMAINS
    assert (why.workload, why.rule, why.need) == ("api", rule, 5)
    assert refused.reasons == (why.words(),)

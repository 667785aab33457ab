"""What `diagnose` says about an item with no home, for every kind of filter rejection.

Each item of a small cluster is diagnosed in the state where every *other* item sits where
greedy put it: that state rejects hosts and zones for capacity, zones outside the node's own,
a zone-affinity block's zone, a pinned host, and each hard grouping. The expected strings are
the messages as they were when rejections were still strings parsed back (`"grouping:3"`);
typed rejections must say exactly the same.
"""

from __future__ import annotations

import pytest

from shoal.model.catalogs import default_inventory
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import Objective
from shoal.placement.explain import diagnose
from shoal.placement.filters import HOST_FILTERS, ZONE_FILTERS, first_rejection
from shoal.placement.greedy import greedy
from shoal.placement.problem import build_problem
from shoal.placement.rejection import Rejection, RejectionKind
from shoal.placement.state import SearchState
from tests.placement.test_rules import cluster, group, rule

INV = default_inventory()

CASES: dict[str, tuple[ClusterSpec, dict[str, str]]] = {
    "capacity and host anti-affinity": (
        cluster(
            group("big", "m1.xlarge", count=10),
            group("db", "m1.large", count=3, volume=400),
            rules=(rule("apart", "anti-affinity", "db"),),
        ),
        {},
    ),
    "zones, zone anti-affinity and zone spread": (
        cluster(
            group("web", count=3, zones=("az1",)),
            group("api", "m1.medium", count=4),
            rules=(
                rule("api-zones", "anti-affinity", "api", scope="zone", max_per_domain=2),
                rule("web-spread", "spread", "web", scope="host"),
            ),
        ),
        {},
    ),
    "zone affinity block": (
        cluster(
            group("a", "m1.large", count=2),
            group("b", "m1.large", count=2),
            rules=(rule("same-zone", "affinity", "a", "b", scope="zone"),),
        ),
        {},
    ),
    "pinned to an existing host": (
        cluster(
            group("web", count=2),
            group("cache", count=1),
            rules=(rule("together", "affinity", "web", "cache"),),
        ),
        {"web-1": "az1-host1", "web-2": "az1-host1"},
    ),
}


def diagnoses(spec: ClusterSpec, existing: dict[str, str]) -> list[str]:
    problem = build_problem(spec, INV, existing, {})
    placed = greedy(problem, Objective.SPREAD).state.host_of
    out = []
    for item in problem.items:
        state = SearchState(problem)
        for other in problem.items:
            if other.index != item.index:
                state.place(other, placed[other.index])
        out.append(diagnose(state, item))
    return out


# The messages before rejections were typed (generated from that code, then frozen here).
EXPECTED: dict[str, list[str]] = {
    "capacity and host anti-affinity": [
        "node big-1 (m1.xlarge) could not be placed: 6 hosts lack free vcpus",
        "node big-2 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-3 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-4 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-5 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-6 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-7 (m1.xlarge) could not be placed: 6 hosts lack free vcpus",
        "node big-8 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-9 (m1.xlarge) could not be placed: 5 hosts lack free vcpus",
        "node big-10 (m1.xlarge) could not be placed: 6 hosts lack free vcpus",
        "node db-1-server and 1 node(s) tied to it (m1.large, "
        "400 GiB of volumes) could not be placed: 3 hosts lack "
        "free vcpus; 2 hosts are ruled out by grouping apart "
        "(anti-affinity, host)",
        "node db-2-server and 1 node(s) tied to it (m1.large, "
        "400 GiB of volumes) could not be placed: 3 hosts lack "
        "free vcpus; 2 hosts are ruled out by grouping apart "
        "(anti-affinity, host)",
        "node db-3-server and 1 node(s) tied to it (m1.large, "
        "400 GiB of volumes) could not be placed: 3 hosts lack "
        "free vcpus; 2 hosts are ruled out by grouping apart "
        "(anti-affinity, host)",
    ],
    "zones, zone anti-affinity and zone spread": [
        "node web-1 (m1.small) could not be placed: 1 "
        "zone are outside the node's zones; 2 hosts "
        "are ruled out by grouping web-spread (spread, "
        "host, max skew 1)",
        "node web-2 (m1.small) could not be placed: 1 "
        "zone are outside the node's zones; 2 hosts "
        "are ruled out by grouping web-spread (spread, "
        "host, max skew 1)",
        "node web-3 (m1.small) could not be placed: 1 "
        "zone are outside the node's zones; 2 hosts "
        "are ruled out by grouping web-spread (spread, "
        "host, max skew 1)",
        "node api-1 (m1.medium) could not be placed: 1 "
        "zone are ruled out by grouping api-zones "
        "(anti-affinity, zone, max 2 per zone)",
        "node api-2 (m1.medium) could not be placed: 1 "
        "zone are ruled out by grouping api-zones "
        "(anti-affinity, zone, max 2 per zone)",
        "node api-3 (m1.medium) could not be placed: 1 "
        "zone are ruled out by grouping api-zones "
        "(anti-affinity, zone, max 2 per zone)",
        "node api-4 (m1.medium) could not be placed: 1 "
        "zone are ruled out by grouping api-zones "
        "(anti-affinity, zone, max 2 per zone)",
    ],
    "zone affinity block": [
        "node a-1 (m1.large) could not be placed: 1 zone are outside the "
        "zone its zone-affinity grouping already uses",
        "node a-2 (m1.large) could not be placed: 1 zone are outside the "
        "zone its zone-affinity grouping already uses",
        "node b-1 (m1.large) could not be placed: 1 zone are outside the "
        "zone its zone-affinity grouping already uses",
        "node b-2 (m1.large) could not be placed: 1 zone are outside the "
        "zone its zone-affinity grouping already uses",
    ],
    "pinned to an existing host": [
        "node cache-1 (m1.small) could not be placed: 1 zone are not "
        "the zone of the host it is tied to; 2 hosts are not the host "
        "it is tied to"
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_diagnose_says_what_it_always_said(name: str) -> None:
    spec, existing = CASES[name]
    assert diagnoses(spec, existing) == EXPECTED[name]


def test_filters_answer_typed_rejections_naming_their_rule_or_resource() -> None:
    seen: set[Rejection] = set()
    for spec, existing in CASES.values():
        problem = build_problem(spec, INV, existing, {})
        placed = greedy(problem, Objective.SPREAD).state.host_of
        mine: set[Rejection | None] = set()
        for item in problem.items:
            state = SearchState(problem)
            for other in problem.items:
                if other.index != item.index:
                    state.place(other, placed[other.index])
            mine.update(
                first_rejection(ZONE_FILTERS, state, item, z)
                for z in range(len(problem.zone_names))
            )
            mine.update(
                first_rejection(HOST_FILTERS, state, item, h) for h in range(len(problem.host_zone))
            )
        for why in mine:
            if why is not None and why.kind is RejectionKind.GROUPING:
                # The constraint index and the grouping's name point at one rule.
                assert problem.constraints[why.constraint].grouping.name == why.grouping
        seen.update(why for why in mine if why is not None)
    assert {why.kind for why in seen} == set(RejectionKind)
    assert {why.resource for why in seen if why.kind is RejectionKind.CAPACITY} == {"vcpus"}
    assert {why.grouping for why in seen if why.kind is RejectionKind.GROUPING} == {
        "apart",
        "api-zones",
        "web-spread",
    }

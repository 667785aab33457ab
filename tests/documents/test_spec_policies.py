"""Policy sections of the native format: what they mean once read, and each kind of mistake.

Error cases follow test_spec_native_errors: one mistake per document, exactly one problem, at
its pointer, with a phrase of its message.
"""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster
from shoal.model import ClusterSpec, Inventory
from shoal.model.policies import (
    AdjustmentType,
    CheckKind,
    DeletionPolicy,
    HealthPolicy,
    Recovery,
    ScalingPolicy,
    StrayHandling,
    Threshold,
    UpdatePolicy,
    VictimOrder,
)
from tests.documents.support import ProblemsOf

HEAD = """\
name: shop
profiles:
  web-server: {type: server, flavor: m1.small, image: cirros}
"""


def group(**sections: str) -> str:
    """A document with one node group `web` carrying the given sections (flow mappings)."""
    lines = "".join(f"    {key}: {body}\n" for key, body in sections.items())
    return HEAD + "node_groups:\n  - name: web\n    profile: web-server\n    count: 3\n" + lines


def top(**sections: str) -> str:
    """A document with the given top-level sections and one plain node group."""
    lines = "".join(f"{key}: {body}\n" for key, body in sections.items())
    return group() + lines


def load(text: str, inventory: Inventory) -> ClusterSpec:
    return load_cluster(text, inventory)


# --- meaning ------------------------------------------------------------------------------------


def test_no_policies_means_none_and_report(inventory: Inventory) -> None:
    spec = load(group(), inventory)
    (web,) = spec.node_groups
    assert (web.health, web.update, web.deletion, web.scaling) == (None, None, None, None)
    assert (spec.health, spec.deletion, spec.strays) == (None, None, StrayHandling.REPORT)
    assert spec.health_of("web") is None
    assert spec.deletion_of("web") == DeletionPolicy()


def test_empty_sections_mean_all_defaults(inventory: Inventory) -> None:
    spec = load(top(health="{}", deletion="{}"), inventory)
    assert spec.health == HealthPolicy() and spec.deletion == DeletionPolicy()
    (web,) = load(
        group(health="{}", update="{}", deletion="{}", scaling="{}"), inventory
    ).node_groups
    assert web.health == HealthPolicy()
    assert web.update == UpdatePolicy()
    assert web.deletion == DeletionPolicy()
    assert web.scaling == ScalingPolicy()


def test_null_section_is_absent(inventory: Inventory) -> None:
    spec = load(top(health="", strays=""), inventory)
    assert spec.health is None and spec.strays is StrayHandling.REPORT


def test_every_field(inventory: Inventory) -> None:
    text = top(
        health="{check: http, path: /ready, port: 8080, expected_codes: [200, 204], "
        "interval_s: 5, timeout_s: 1.5, failures: 2, grace_s: 0, recovery: reboot, "
        'max_unhealthy: "25%"}',
        deletion="{victims: oldest_profile_first, balance_zones: false}",
        strays="delete",
    )
    spec = load(text, inventory)
    assert spec.health == HealthPolicy(
        check=CheckKind.HTTP,
        path="/ready",
        port=8080,
        expected_codes=(200, 204),
        interval_s=5.0,
        timeout_s=1.5,
        failures=2,
        grace_s=0.0,
        recovery=Recovery.REBOOT,
        max_unhealthy=Threshold(25, percent=True),
    )
    assert spec.deletion == DeletionPolicy(VictimOrder.OLDEST_PROFILE_FIRST, balance_zones=False)
    assert spec.strays is StrayHandling.DELETE


def test_group_policies(inventory: Inventory) -> None:
    (web,) = load(
        group(
            health="{check: tcp, port: 22, max_unhealthy: 2, recovery: none}",
            update="{max_unavailable: 0, max_surge: 2, pause_s: 10, health_gate: false, "
            "failure_threshold: 3}",
            scaling="{adjustment_type: CHANGE_IN_PERCENTAGE, number: 12.5, min_step: 2, "
            "cooldown_s: 0, strict: true}",
        ),
        inventory,
    ).node_groups
    assert web.health == HealthPolicy(
        check=CheckKind.TCP, port=22, max_unhealthy=Threshold(2), recovery=Recovery.NONE
    )
    assert web.update == UpdatePolicy(
        max_unavailable=0, max_surge=2, pause_s=10.0, health_gate=False, failure_threshold=3
    )
    assert web.scaling == ScalingPolicy(
        AdjustmentType.CHANGE_IN_PERCENTAGE, number=12.5, min_step=2, cooldown_s=0.0, strict=True
    )


def test_exact_capacity_may_be_zero(inventory: Inventory) -> None:
    (web,) = load(
        group(scaling="{adjustment_type: EXACT_CAPACITY, number: 0}"), inventory
    ).node_groups
    assert web.scaling == ScalingPolicy(AdjustmentType.EXACT_CAPACITY, number=0)


def test_group_overrides_cluster_health(inventory: Inventory) -> None:
    text = (
        HEAD
        + "health: {check: tcp, port: 22}\n"
        + "deletion: {victims: random}\n"
        + "node_groups:\n"
        + "  - {name: web, profile: web-server, count: 2, health: {check: http, failures: 5},"
        + " deletion: {victims: oldest_first}}\n"
        + "  - {name: app, profile: web-server, count: 2}\n"
    )
    spec = load(text, inventory)
    assert spec.health_of("web") == HealthPolicy(check=CheckKind.HTTP, failures=5)
    assert spec.health_of("app") == HealthPolicy(check=CheckKind.TCP, port=22)
    assert spec.deletion_of("web").victims is VictimOrder.OLDEST_FIRST
    assert spec.deletion_of("app").victims is VictimOrder.RANDOM


def test_timeout_defaults_to_at_most_the_interval(inventory: Inventory) -> None:
    fast = load(top(health="{interval_s: 0.5}"), inventory).health
    assert fast is not None and (fast.interval_s, fast.timeout_s) == (0.5, 0.5)
    slow = load(top(health="{interval_s: 30}"), inventory).health
    assert slow is not None and slow.timeout_s == HealthPolicy().timeout_s


def test_percentages_at_the_edges(inventory: Inventory) -> None:
    for text, expected in [('"0%"', Threshold(0, True)), ('"100%"', Threshold(100, True))]:
        spec = load(top(health=f"{{max_unhealthy: {text}}}"), inventory)
        assert spec.health is not None and spec.health.max_unhealthy == expected


# --- mistakes -----------------------------------------------------------------------------------

H = "/node_groups/0/health"
U = "/node_groups/0/update"
D = "/node_groups/0/deletion"
S = "/node_groups/0/scaling"

# (id, document, pointer, phrase)
CASES: list[tuple[str, str, str, str]] = [
    # --- sections
    ("health-not-mapping", group(health="http"), H, "a health policy must be a mapping"),
    ("update-list", group(update="[1]"), U, "an update policy must be a mapping"),
    ("deletion-text", top(deletion="oldest"), "/deletion", "a deletion policy must be a mapping"),
    ("scaling-number", group(scaling="2"), S, "a scaling policy must be a mapping"),
    (
        "update-at-cluster",
        top(update="{max_unavailable: 1}"),
        "/update",
        "set per node group, not for the whole cluster",
    ),
    ("scaling-at-cluster", top(scaling="{}"), "/scaling", "move it into the node groups"),
    (
        "health-on-instance",
        group() + "instances:\n  - {name: lb, profile: web-server, health: {}}\n",
        "/instances/0/health",
        "an instance follows the cluster's health policy",
    ),
    (
        "scaling-on-instance",
        group() + "instances:\n  - {name: lb, profile: web-server, scaling: {}}\n",
        "/instances/0/scaling",
        "'scaling' is a node-group policy",
    ),
    ("strays", top(strays="remove"), "/strays", "choose one of report, delete"),
    # --- health
    (
        "health-unknown-field",
        group(health="{intervall_s: 3}"),
        f"{H}/intervall_s",
        "did you mean 'interval_s'",
    ),
    ("check-unknown", group(health="{check: https}"), f"{H}/check", "did you mean 'http'"),
    ("check-case", group(health="{check: HTTP}"), f"{H}/check", "did you mean 'http'"),
    (
        "path-on-provider",
        group(health="{path: /health}"),
        f"{H}/path",
        "only for http checks, not for a provider check",
    ),
    ("path-on-tcp", group(health="{check: tcp, path: /x}"), f"{H}/path", "only for http checks"),
    (
        "codes-on-provider",
        group(health="{check: provider, expected_codes: [200]}"),
        f"{H}/expected_codes",
        "only for http checks",
    ),
    ("port-on-provider", group(health="{port: 80}"), f"{H}/port", "only for http/tcp checks"),
    (
        "path-relative",
        group(health="{check: http, path: health}"),
        f"{H}/path",
        "must start with '/'",
    ),
    ("path-space", group(health="{check: http, path: /a b}"), f"{H}/path", "contains a space"),
    ("path-number", group(health="{check: http, path: 8}"), f"{H}/path", "expected text"),
    ("port-zero", group(health="{check: tcp, port: 0}"), f"{H}/port", "must be at least 1"),
    ("port-large", group(health="{check: tcp, port: 70000}"), f"{H}/port", "at most 65535"),
    ("port-text", group(health="{check: tcp, port: '80'}"), f"{H}/port", "without quotes"),
    (
        "codes-int",
        group(health="{check: http, expected_codes: 200}"),
        f"{H}/expected_codes",
        "e.g. [200]",
    ),
    (
        "codes-empty",
        group(health="{check: http, expected_codes: []}"),
        f"{H}/expected_codes",
        "at least one status code",
    ),
    (
        "codes-range",
        group(health="{check: http, expected_codes: [200, 700]}"),
        f"{H}/expected_codes/1",
        "from 100 to 599",
    ),
    (
        "codes-text",
        group(health="{check: http, expected_codes: ['204']}"),
        f"{H}/expected_codes/0",
        "without quotes",
    ),
    (
        "codes-twice",
        group(health="{check: http, expected_codes: [200, 200]}"),
        f"{H}/expected_codes/1",
        "listed twice",
    ),
    ("interval-zero", group(health="{interval_s: 0}"), f"{H}/interval_s", "greater than 0"),
    (
        "interval-unit",
        group(health="{interval_s: 10s}"),
        f"{H}/interval_s",
        "write the number alone, e.g. 10",
    ),
    ("interval-quoted", group(health="{interval_s: '10'}"), f"{H}/interval_s", "without quotes"),
    (
        "interval-inf",
        group(health="{interval_s: .inf}"),
        f"{H}/interval_s",
        "expected a finite number",
    ),
    ("interval-bool", group(health="{interval_s: true}"), f"{H}/interval_s", "found true"),
    ("timeout-negative", group(health="{timeout_s: -1}"), f"{H}/timeout_s", "greater than 0"),
    (
        "timeout-over-interval",
        group(health="{interval_s: 5, timeout_s: 6}"),
        f"{H}/timeout_s",
        "timeout_s (6) is above interval_s (5)",
    ),
    ("failures-zero", group(health="{failures: 0}"), f"{H}/failures", "must be at least 1"),
    (
        "failures-fraction",
        group(health="{failures: 1.5}"),
        f"{H}/failures",
        "a count of checks as a positive integer",
    ),
    ("grace-negative", group(health="{grace_s: -5}"), f"{H}/grace_s", "must be at least 0"),
    (
        "recovery",
        group(health="{recovery: restart}"),
        f"{H}/recovery",
        "choose one of reboot, rebuild, replace, none",
    ),
    (
        "max-unhealthy-over",
        group(health='{max_unhealthy: "150%"}'),
        f"{H}/max_unhealthy",
        "at most 100%",
    ),
    (
        "max-unhealthy-negative",
        group(health="{max_unhealthy: -1}"),
        f"{H}/max_unhealthy",
        "must be at least 0",
    ),
    (
        "max-unhealthy-fraction",
        group(health="{max_unhealthy: 0.4}"),
        f"{H}/max_unhealthy",
        'e.g. "40%"',
    ),
    (
        "max-unhealthy-whole-float",
        group(health="{max_unhealthy: 2.0}"),
        f"{H}/max_unhealthy",
        "without the decimal point",
    ),
    (
        "max-unhealthy-decimal-percent",
        group(health='{max_unhealthy: "12.5%"}'),
        f"{H}/max_unhealthy",
        "whole percentage",
    ),
    (
        "max-unhealthy-quoted",
        group(health="{max_unhealthy: '3'}"),
        f"{H}/max_unhealthy",
        "add '%' for a percentage",
    ),
    (
        "max-unhealthy-word",
        group(health="{max_unhealthy: half}"),
        f"{H}/max_unhealthy",
        'a percentage of the group such as "40%"',
    ),
    (
        "cluster-health-field",
        top(health="{check: http, path: /x, prot: 80}"),
        "/health/prot",
        "did you mean 'port'",
    ),
    # --- update
    (
        "update-unknown",
        group(update="{max_unavailible: 2}"),
        f"{U}/max_unavailible",
        "did you mean 'max_unavailable'",
    ),
    (
        "unavailable-negative",
        group(update="{max_unavailable: -1}"),
        f"{U}/max_unavailable",
        "must be at least 0",
    ),
    ("surge-text", group(update="{max_surge: one}"), f"{U}/max_surge", "expected a whole number"),
    ("nothing-replaceable", group(update="{max_unavailable: 0}"), f"{U}/max_unavailable", "both 0"),
    ("pause-negative", group(update="{pause_s: -1}"), f"{U}/pause_s", "must be at least 0"),
    (
        "gate-text",
        group(update="{health_gate: 'yes'}"),
        f"{U}/health_gate",
        "write true or false without quotes",
    ),
    ("gate-number", group(update="{health_gate: 1}"), f"{U}/health_gate", "not 1 or 0"),
    (
        "gate-timeout-zero",
        group(update="{gate_timeout_s: 0}"),
        f"{U}/gate_timeout_s",
        "greater than 0",
    ),
    (
        "gate-timeout-without-gate",
        group(update="{health_gate: false, gate_timeout_s: 60}"),
        f"{U}/gate_timeout_s",
        "only applies when health_gate is true",
    ),
    (
        "failure-threshold-zero",
        group(update="{failure_threshold: 0}"),
        f"{U}/failure_threshold",
        "must be at least 1",
    ),
    # --- deletion
    ("victims", group(deletion="{victims: oldest}"), f"{D}/victims", "did you mean 'oldest_first'"),
    (
        "victims-dash",
        group(deletion="{victims: oldest-first}"),
        f"{D}/victims",
        "did you mean 'oldest_first'",
    ),
    (
        "balance-text",
        group(deletion="{balance_zones: maybe}"),
        f"{D}/balance_zones",
        "expected true or false",
    ),
    (
        "deletion-unknown",
        group(deletion="{victim: random}"),
        f"{D}/victim",
        "did you mean 'victims'",
    ),
    # --- scaling
    (
        "adjustment-lower",
        group(scaling="{adjustment_type: change_in_capacity}"),
        f"{S}/adjustment_type",
        "did you mean 'CHANGE_IN_CAPACITY'",
    ),
    (
        "adjustment-unknown",
        group(scaling="{adjustment_type: PERCENT}"),
        f"{S}/adjustment_type",
        "choose one of EXACT_CAPACITY, CHANGE_IN_CAPACITY, CHANGE_IN_PERCENTAGE",
    ),
    ("number-zero", group(scaling="{number: 0}"), f"{S}/number", "greater than 0"),
    (
        "number-fraction",
        group(scaling="{number: 1.5}"),
        f"{S}/number",
        "the number of nodes to add or remove: a whole number",
    ),
    (
        "exact-negative",
        group(scaling="{adjustment_type: EXACT_CAPACITY, number: -1}"),
        f"{S}/number",
        "must be at least 0",
    ),
    (
        "exact-fraction",
        group(scaling="{adjustment_type: EXACT_CAPACITY, number: 2.5}"),
        f"{S}/number",
        "the target count: a whole number",
    ),
    (
        "percentage-zero",
        group(scaling="{adjustment_type: CHANGE_IN_PERCENTAGE, number: 0}"),
        f"{S}/number",
        "greater than 0",
    ),
    (
        "min-step-zero",
        group(scaling="{adjustment_type: CHANGE_IN_PERCENTAGE, min_step: 0}"),
        f"{S}/min_step",
        "must be at least 1",
    ),
    (
        "min-step-on-capacity",
        group(scaling="{min_step: 2}"),
        f"{S}/min_step",
        "only applies to CHANGE_IN_PERCENTAGE, not to CHANGE_IN_CAPACITY",
    ),
    (
        "cooldown-negative",
        group(scaling="{cooldown_s: -1}"),
        f"{S}/cooldown_s",
        "must be at least 0",
    ),
    ("cooldown-placeholder", group(scaling="{cooldown_s: TBD}"), f"{S}/cooldown_s", "placeholder"),
    ("strict-text", group(scaling="{strict: 'false'}"), f"{S}/strict", "without quotes"),
    (
        "scaling-unknown",
        group(scaling="{cooldown: 30}"),
        f"{S}/cooldown",
        "did you mean 'cooldown_s'",
    ),
]


@pytest.mark.parametrize(
    ("text", "path", "phrase"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_one_mistake_one_problem(
    problems_of: ProblemsOf, text: str, path: str, phrase: str
) -> None:
    problems = problems_of(text)
    assert len(problems) == 1, problems
    (problem,) = problems
    assert problem.path == path, problem
    assert phrase in problem.message, problem


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_every_policy_mistake_at_once(problems_of: ProblemsOf) -> None:
    text = (
        HEAD
        + "health: {check: provider, path: /x, interval_s: 0}\n"
        + "strays: keep\n"
        + "node_groups:\n"
        + "  - name: web\n"
        + "    profile: web-server\n"
        + "    count: 3\n"
        + "    countt: 3\n"
        + "    health: {check: http, expected_codes: [99], failures: 0}\n"
        + "    update: {max_unavailable: 0, max_surge: 0, pause: 1}\n"
        + "    deletion: {victims: newest_first}\n"
        + "    scaling: {number: -2, min_step: 3}\n"
    )
    problems = problems_of(text)
    assert sorted(p.path for p in problems) == sorted(
        [
            "/health/path",
            "/health/interval_s",
            "/strays",
            "/node_groups/0/countt",
            f"{H}/expected_codes/0",
            f"{H}/failures",
            f"{U}/pause",
            f"{U}/max_unavailable",
            f"{D}/victims",
            f"{S}/number",
            f"{S}/min_step",
        ]
    ), problems


def test_a_broken_policy_does_not_hide_other_groups(problems_of: ProblemsOf) -> None:
    text = (
        HEAD
        + "node_groups:\n"
        + "  - {name: web, profile: web-server, count: 1, health: {failures: 0}}\n"
        + "  - {name: app, profile: nope, count: 1, scaling: {number: 0}}\n"
    )
    assert [p.path for p in problems_of(text)] == [
        "/node_groups/0/health/failures",
        "/node_groups/1/profile",
        "/node_groups/1/scaling/number",
    ]

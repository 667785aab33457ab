"""`to_document` writes a cluster back as a native document that loads to an equal cluster.

Exported profiles are inline, so a named profile comes back without its name: equality is
checked with profile names set aside.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoal.documents import cluster_from_tree, load_cluster, load_cluster_file, load_inventory_file
from shoal.documents.export import to_document
from shoal.model import ClusterSpec, Inventory, NodeGroup
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import UnitPart
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
from tests.documents.support import EXAMPLES

INVENTORY: Inventory = default_inventory()


def unnamed(spec: ClusterSpec) -> ClusterSpec:
    """`spec` with every profile's name dropped (the export writes profiles inline)."""
    groups = tuple(
        dataclasses.replace(
            g,
            parts=tuple(
                UnitPart(p.part, dataclasses.replace(p.profile, name=None)) for p in g.parts
            ),
        )
        for g in spec.node_groups
    )
    instances = tuple(
        dataclasses.replace(i, profile=dataclasses.replace(i.profile, name=None))
        for i in spec.instances
    )
    return dataclasses.replace(spec, node_groups=groups, instances=instances)


def round_trip(spec: ClusterSpec, inventory: Inventory = INVENTORY) -> None:
    document = to_document(spec)
    assert cluster_from_tree(document, inventory) == unnamed(spec)
    assert load_cluster(yaml.safe_dump(document, sort_keys=False), inventory) == unnamed(spec)
    assert load_cluster(json.dumps(document), inventory) == unnamed(spec)


# An example that is an inventory, not a cluster, and the examples planned against it (their
# header comments say `--inventory examples/hosts.yaml`).
INVENTORY_EXAMPLES = {"hosts.yaml"}
OWN_INVENTORY = {"bins.yaml": "hosts.yaml"}
EXAMPLE_FILES = sorted(
    p.name
    for p in EXAMPLES.iterdir()
    if p.suffix in (".yaml", ".json") and p.name not in INVENTORY_EXAMPLES
)


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_examples_round_trip(name: str) -> None:
    own = OWN_INVENTORY.get(name)
    inventory = load_inventory_file(EXAMPLES / own) if own else INVENTORY
    round_trip(load_cluster_file(EXAMPLES / name, inventory), inventory)


def test_managed_web_is_among_the_examples() -> None:
    assert "managed-web.yaml" in EXAMPLE_FILES


def test_default_policies_are_written_as_empty_sections() -> None:
    spec = load_cluster(
        "name: c\nhealth: {}\ndeletion: {}\nnode_groups:\n"
        "  - {name: w, profile: {type: volume, size: 1}, count: 1, update: {}, scaling: {}}\n",
        INVENTORY,
    )
    document = to_document(spec)
    assert document["health"] == {} and document["deletion"] == {}
    assert document["node_groups"][0]["update"] == {}
    assert "health" not in document["node_groups"][0]
    assert "strays" not in document
    round_trip(spec)


def test_fields_a_check_does_not_use_are_left_out() -> None:
    """A policy built in code may carry values its check ignores; the document stays valid."""
    base = load_cluster("name: c\n", INVENTORY)
    spec = dataclasses.replace(
        base,
        health=HealthPolicy(check=CheckKind.PROVIDER, path="/x", port=80),
    )
    assert to_document(spec)["health"] == {}
    cluster_from_tree(to_document(spec), INVENTORY)  # loads without problems


# --- random policies ----------------------------------------------------------------------------

seconds = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)
whole_seconds = st.integers(min_value=1, max_value=3600).map(float)
thresholds = st.builds(Threshold, st.integers(0, 100), st.booleans()) | st.builds(
    Threshold, st.integers(0, 10**6)
)


@st.composite
def health_policies(draw: st.DrawFn) -> HealthPolicy:
    check = draw(st.sampled_from(CheckKind))
    interval = draw(seconds | whole_seconds)
    timeout = draw(st.floats(min_value=0.001, max_value=interval) | st.just(interval))
    http, probe = check is CheckKind.HTTP, check is not CheckKind.PROVIDER
    return HealthPolicy(
        check=check,
        path=draw(st.sampled_from(["/health", "/", "/ready?x=1", "/a/b"])) if http else "/health",
        port=draw(st.none() | st.integers(1, 65535)) if probe else None,
        expected_codes=(
            tuple(draw(st.lists(st.integers(100, 599), min_size=1, max_size=4, unique=True)))
            if http
            else (200,)
        ),
        interval_s=interval,
        timeout_s=timeout,
        failures=draw(st.integers(1, 100)),
        grace_s=draw(st.just(0.0) | seconds),
        recovery=draw(st.sampled_from(Recovery)),
        max_unhealthy=draw(thresholds),
    )


@st.composite
def update_policies(draw: st.DrawFn) -> UpdatePolicy:
    unavailable = draw(st.integers(0, 20))
    gate = draw(st.booleans())
    return UpdatePolicy(
        max_unavailable=unavailable,
        max_surge=draw(st.integers(1 if unavailable == 0 else 0, 20)),
        pause_s=draw(st.just(0.0) | seconds),
        health_gate=gate,
        gate_timeout_s=draw(seconds) if gate else 300.0,
        failure_threshold=draw(st.integers(1, 20)),
    )


@st.composite
def scaling_policies(draw: st.DrawFn) -> ScalingPolicy:
    kind = draw(st.sampled_from(AdjustmentType))
    if kind is AdjustmentType.EXACT_CAPACITY:
        number: float = draw(st.integers(0, 1000))
    elif kind is AdjustmentType.CHANGE_IN_CAPACITY:
        number = draw(st.integers(1, 1000))
    else:
        number = draw(st.floats(min_value=0.01, max_value=1000) | st.integers(1, 1000))
    return ScalingPolicy(
        adjustment_type=kind,
        number=number,
        min_step=draw(st.integers(1, 50)) if kind is AdjustmentType.CHANGE_IN_PERCENTAGE else 1,
        cooldown_s=draw(st.just(0.0) | seconds),
        strict=draw(st.booleans()),
    )


deletion_policies = st.builds(DeletionPolicy, st.sampled_from(VictimOrder), st.booleans())


@st.composite
def clusters(draw: st.DrawFn) -> ClusterSpec:
    base = load_cluster(
        "name: c\nnode_groups:\n"
        "  - {name: web, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 2}\n"
        "  - {name: data, profile: {type: volume, size: 1}, count: 1}\n",
        INVENTORY,
    )
    groups: list[NodeGroup] = [
        dataclasses.replace(
            g,
            health=draw(st.none() | health_policies()),
            update=draw(st.none() | update_policies()),
            deletion=draw(st.none() | deletion_policies),
            scaling=draw(st.none() | scaling_policies()),
        )
        for g in base.node_groups
    ]
    return dataclasses.replace(
        base,
        node_groups=tuple(groups),
        health=draw(st.none() | health_policies()),
        deletion=draw(st.none() | deletion_policies),
        strays=draw(st.sampled_from(StrayHandling)),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_random_policies_round_trip(spec: ClusterSpec) -> None:
    round_trip(spec)

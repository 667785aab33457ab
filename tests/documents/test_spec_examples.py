"""The worked examples load cleanly against the default inventory and mean what they say."""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster, load_cluster_file
from shoal.model import Inventory, MemberRef, Objective, Rule, Scope, ServerProfile, VolumeProfile
from shoal.model.nodes import expand
from shoal.model.policies import (
    AdjustmentType,
    CheckKind,
    DeletionPolicy,
    HealthPolicy,
    Recovery,
    ScalingPolicy,
    Threshold,
    UpdatePolicy,
    VictimOrder,
)
from shoal.placement import solve
from tests.documents.support import EXAMPLES


@pytest.mark.parametrize(
    "name",
    ["three-tier.yaml", "db-pair.yaml", "magnum.yaml", "managed-web.yaml", "vcluster-seed.json"],
)
def test_example_loads(inventory: Inventory, name: str) -> None:
    spec = load_cluster_file(EXAMPLES / name, inventory)
    assert expand(spec)


def test_three_tier(inventory: Inventory) -> None:
    spec = load_cluster_file(EXAMPLES / "three-tier.yaml", inventory)
    assert spec.name == "shop"
    assert spec.objective is Objective.SPREAD
    assert spec.metadata == {"owner": "team-a"}
    web, app, db = spec.node_groups
    assert (web.count, web.min_size, web.max_size, web.zones) == (4, 2, 10, ("az1", "az2"))
    assert web.depends_on == ("app",) and app.depends_on == ("db",)
    assert web.labels == {"tier": "web"} and web.role == "frontend"
    assert isinstance(web.parts[0].profile, ServerProfile)
    assert web.parts[0].profile.flavor.name == "m1.small"
    assert web.parts[0].profile.name == "web-server"
    assert db.is_unit and [p.part for p in db.parts] == ["server", "data"]
    data = db.parts[1].profile
    assert isinstance(data, VolumeProfile) and data.size_gb == 100 and data.volume_type == "ssd"
    (bastion,) = spec.instances
    assert bastion.zone == "az1" and bastion.profile.name is None
    spread, app_apart, db_apart = spec.groupings
    assert (spread.rule, spread.scope, spread.max_skew) == (Rule.SPREAD, Scope.ZONE, 1)
    assert app_apart.members == (MemberRef("app"),)
    assert (db_apart.rule, db_apart.scope) == (Rule.ANTI_AFFINITY, Scope.ZONE)
    names = [n.name for n in expand(spec)]
    assert "db-2-data" in names and "web-4" in names and "bastion" in names


def test_magnum_groups_use_their_own_flavors_and_zones(inventory: Inventory) -> None:
    spec = load_cluster_file(EXAMPLES / "magnum.yaml", inventory)
    seen = {}
    for g in spec.node_groups:
        profile = g.parts[0].profile
        assert isinstance(profile, ServerProfile)
        seen[g.name] = (profile.flavor.name, g.zones, g.count)
    assert seen == {
        "masters": ("m1.medium", ("az1",), 3),
        "workers-small": ("m1.small", ("az2",), 3),
        "workers-large": ("m1.large", ("az1",), 1),
    }


def test_vcluster_seed_example(inventory: Inventory) -> None:
    spec = load_cluster_file(EXAMPLES / "vcluster-seed.json", inventory)
    kinds = [str(i.profile.kind) for i in spec.instances]
    assert kinds == ["server", "volume", "server", "volume"]
    flavors = [
        i.profile.flavor.name for i in spec.instances if isinstance(i.profile, ServerProfile)
    ]
    assert flavors == ["m1.small", "m1.small"]  # by id "2" and by name "m1.small"
    assert [g.members for g in spec.groupings][2] == (
        MemberRef("db-server-1"),
        MemberRef("db-server-2"),
    )


def test_managed_web(inventory: Inventory) -> None:
    spec = load_cluster_file(EXAMPLES / "managed-web.yaml", inventory)
    (web,) = spec.node_groups
    profile = web.parts[0].profile
    assert isinstance(profile, ServerProfile) and profile.flavor.name == "m1.tiny"
    assert (web.count, web.max_size, web.zones) == (6, 10, ("az1", "az2"))
    assert web.health == HealthPolicy(
        check=CheckKind.HTTP,
        path="/health",
        interval_s=1.0,
        timeout_s=1.0,
        failures=2,
        grace_s=5.0,
        recovery=Recovery.REPLACE,
        max_unhealthy=Threshold(50, percent=True),
    )
    assert web.update == UpdatePolicy(max_unavailable=1)
    assert web.scaling == ScalingPolicy(
        AdjustmentType.CHANGE_IN_CAPACITY, number=2, cooldown_s=30.0
    )
    assert web.deletion == DeletionPolicy(VictimOrder.OLDEST_FIRST, balance_zones=True)
    result = solve(spec, inventory)
    assert result.feasible, result.reasons
    per_zone = [a.zone for a in result.assignments]
    assert sorted(per_zone) == ["az1"] * 3 + ["az2"] * 3


def test_docs_show_the_managed_web_example(inventory: Inventory) -> None:
    """The example in docs/cluster-format.md ("Policies") means what the example file means."""
    text = (EXAMPLES.parent / "docs" / "cluster-format.md").read_text()
    block = text.split("# examples/managed-web.yaml\n", 1)[1].split("```", 1)[0]
    assert load_cluster(block, inventory) == load_cluster_file(
        EXAMPLES / "managed-web.yaml", inventory
    )

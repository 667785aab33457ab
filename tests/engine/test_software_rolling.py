"""The pure rollout rules (engine/software/rolling.py): batches from the due UPDATEs, only
started batches run, a held rollout stays held for its revision and a new revision starts
afresh; the typed state survives its JSON."""

from __future__ import annotations

from shoal.engine.software.rolling import roll
from shoal.model.members import MemberRef
from shoal.model.policies import UpdatePolicy
from shoal.model.rollouts import RolloutPhase, SoftwareRollout
from shoal.model.software import (
    DeployAction,
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    HookGroup,
    LiteralInput,
    NodeFacts,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.planning.software import plan, revision

NODES = [
    NodeFacts(f"app-{i}", MemberRef("app"), i, f"10.0.0.{i}", None, None, True) for i in (1, 2, 3)
]
POLICIES = {"app": UpdatePolicy(max_unavailable=2)}


def spec(version: str) -> SoftwareSpec:
    return SoftwareSpec(
        configs=(SoftwareConfig("c", HookGroup.SCRIPT, "echo"),),
        deployments=(Deployment("d", "c", MemberRef("app"), inputs={"v": LiteralInput(version)}),),
    )


def done_with(version: str) -> list[DeploymentRecord]:
    digests = plan(spec(version), NODES, []).wanted
    return [
        DeploymentRecord("d", n.name, DeploymentStatus.COMPLETE, digests[("d", n.name)])
        for n in NODES
    ]


def test_a_new_revision_rolls_in_batches() -> None:
    records = done_with("1")
    p = plan(spec("2"), NODES, records)
    assert {i.action for i in p.due} == {DeployAction.UPDATE}
    out = roll(p, spec("2"), POLICIES, {}, {}, set(), {}, {n.name for n in NODES}, 5.0)
    (r,) = out.changed
    assert r.batches == (("app-1", "app-2"), ("app-3",)) and r.phase is RolloutPhase.RUN
    assert sorted(i.node for i in out.allowed) == ["app-1", "app-2"]


def test_a_rolled_back_revision_is_held_until_the_document_changes() -> None:
    records = done_with("1")
    held = SoftwareRollout(
        "d",
        revision(spec("2"), spec("2").deployments[0]),
        "app",
        (("app-1", "app-2"), ("app-3",)),
        phase=RolloutPhase.ROLLED_BACK,
        reason="deployment failed on app-1",
    )
    names = {n.name for n in NODES}
    p = plan(spec("2"), NODES, records)
    out = roll(p, spec("2"), POLICIES, {"d": held}, {}, set(), {}, names, 5.0)
    assert out.allowed == [] and out.changed == [] and out.restores == []
    p3 = plan(spec("3"), NODES, records)
    out = roll(p3, spec("3"), POLICIES, {"d": held}, {}, set(), {}, names, 5.0)
    (fresh,) = out.changed
    assert fresh.phase is RolloutPhase.RUN and fresh.revision != held.revision
    assert len(out.allowed) == 2


def test_the_state_survives_json() -> None:
    r = SoftwareRollout(
        "d", "rev", "app", (("a",), ("b",)), started=2, phase=RolloutPhase.GATE, gate_until=9.5
    )
    assert SoftwareRollout.from_json(r.to_json()) == r
    assert r.summary() == "batch 2 of 2 (gate)"

"""The engine's action contracts read back what they write, and read the JSON rows written
before they existed (and by other writers, whose own keys they keep)."""

from __future__ import annotations

from shoal.engine.contracts import (
    AttachInputs,
    ClusterInputs,
    ClusterOutputs,
    DeleteInputs,
    NodeInputs,
    NodeOutputs,
    NodeUpdate,
    Repair,
    RepairHow,
    RollingPhase,
    RollingStage,
    RollingState,
)
from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.policies import Recovery
from shoal.providers.base import ServerGroupHint


def test_node_inputs_round_trip_and_read_rows_of_the_older_shape() -> None:
    made = NodeInputs(
        "web-1",
        "c",
        NodeKind.SERVER,
        "h1",
        "z1",
        {"flavor": "m1", "image": "i"},
        server_group=ServerGroupHint("spread", "anti-affinity", 2),
    )
    assert NodeInputs.from_json(made.to_json()) == made
    assert "provider_id" not in made.to_json()  # a fresh create: nothing was made before
    # A recreate carries the node's provider id (maybe none): never a fresh create.
    row = {
        "node": "a",
        "cluster_name": "",
        "kind": "volume",
        "host": "h",
        "zone": "z",
        "profile": {"type": "volume", "size": 1},
        "provider_id": None,
        "senlin_action": "X",
    }
    again = NodeInputs.from_json(row)
    assert again.existing and again.provider_id is None and again.kind is NodeKind.VOLUME
    assert again.resource_name == "a"
    assert made.resource_name == "c-web-1"


def test_delete_and_attach_inputs_round_trip() -> None:
    d = DeleteInputs("web-1", "c", NodeKind.SERVER, None)
    assert DeleteInputs.from_json(d.to_json()) == d
    a = AttachInputs("vol-1", "c", "web-1", "node-id")
    assert AttachInputs.from_json(a.to_json()) == a
    assert NodeOutputs(server="web-1").to_json() == {"server": "web-1"}
    assert NodeOutputs("p", None).to_json() == {"provider_id": "p", "address": None}
    assert NodeOutputs().to_json() == {}


def test_cluster_inputs_keep_the_request_and_other_writers_keys() -> None:
    row = {
        "count": 2,
        "senlin_action": "CLUSTER_SCALE_OUT",
        "victims": ["web-3"],
        "previous_document": {"name": "c"},
    }
    inputs = ClusterInputs.from_json(row)
    assert inputs.victims == ("web-3",) and inputs.previous_document == {"name": "c"}
    assert inputs.request == {"count": 2, "senlin_action": "CLUSTER_SCALE_OUT"}
    assert inputs.to_json() == row
    recover = ClusterInputs(repairs=(Repair.missing(2),), reason="why")
    assert recover.to_json() == {
        "repairs": [{"node": "2 missing node(s)", "how": "create", "why": "missing"}],
        "reason": "why",
    }
    assert ClusterInputs.from_json(recover.to_json()) == recover


def test_repair_how_from_a_policy_fits_the_node() -> None:
    assert RepairHow.of_policy(Recovery.NONE) is None
    assert RepairHow.of_policy(Recovery.REBOOT) is RepairHow.REBOOT
    assert RepairHow.REBOOT.fitted(NodeKind.VOLUME, made=True) is RepairHow.RECREATE
    assert RepairHow.REPLACE.fitted(NodeKind.VOLUME, made=True) is RepairHow.REPLACE
    assert RepairHow.REPLACE.fitted(NodeKind.SERVER, made=False) is RepairHow.RECREATE
    assert RepairHow.REBUILD.fitted(NodeKind.SERVER, made=True) is RepairHow.REBUILD


def test_rolling_state_round_trips_inside_the_outputs() -> None:
    stage = RollingStage("web", ("web-1", "web-2"), True, True, 30.0, 0.0, 1)
    state = RollingState((stage,), next=1, phase=RollingPhase.GATE, gate_until=31.0, gate_next=1.0)
    outputs = ClusterOutputs(planned=True, plan={"create": 2}, rolling=state, extra={"other": 1})
    row = outputs.to_json()
    assert row["rolling"]["phase"] == "gate" and row["rolling"]["next"] == 1  # the UI reads these
    assert ClusterOutputs.from_json(row) == outputs
    assert state.current == stage
    old = {
        "stages": [stage.to_json()],
        "next": 0,
        "phase": "plan",
        "failed_before": 0,
        "rollback": False,
    }
    assert RollingState.from_json(old) == RollingState((stage,))


def test_a_node_update_sets_only_its_columns() -> None:
    assert NodeUpdate.running("p1", None).change("n1", 3.0).columns() == {
        "updated_at": 3.0,
        "status": NodeStatus.ACTIVE,
        "status_reason": "",
        "provider_id": "p1",
        "address": None,
        "health": "UNKNOWN",
        "health_reason": "",
    }
    assert NodeUpdate(NodeStatus.DELETED, deleted_at=5.0).change("n1", 5.0).columns() == {
        "updated_at": 5.0,
        "status": NodeStatus.DELETED,
        "deleted_at": 5.0,
    }

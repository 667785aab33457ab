"""The document edits of cluster requests, on plain documents: no database, no engine."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.problems import Problem
from shoal.service import edits
from shoal.service.errors import Conflict, ErrorKind, Invalid, NotFound
from shoal.service.resize import Adjustment
from shoal.store.records import NodeRecord


def _doc() -> dict[str, Any]:
    return {
        "name": "c",
        "node_groups": [
            {"name": "web", "count": 3, "min": 2, "profile": {"flavor": "m1", "image": "i"}},
            {"name": "db", "count": 1, "depends_on": [], "profile": {"flavor": "m1"}},
        ],
        "instances": [{"name": "bastion", "profile": {"flavor": "m1"}}],
        "groupings": [{"name": "spread", "members": ["web", "bastion", "db"]}],
    }


def _node(name: str, group: str, replica: int) -> NodeRecord:
    return NodeRecord(
        id=f"id-{name}",
        cluster_id="c1",
        project_id="p",
        name=name,
        kind=NodeKind.SERVER,
        group_name=group,
        part=None,
        replica=replica,
        status=NodeStatus.ACTIVE,
        status_reason="",
        host="h1",
        zone="z",
        address=None,
        provider_id="x",
        profile={},
        vcpus=1,
        ram_mb=1,
        disk_gb=1,
        volume_gb=0,
        attach_to=None,
        health="UNKNOWN",
        health_reason="",
        checked_at=None,
        created_at=0.0,
        updated_at=0.0,
        deleted_at=None,
    )


def test_resize_sets_the_count_and_bounds_of_the_named_group() -> None:
    doc = edits.resize(_doc(), edits.Resize(Adjustment.CHANGE_IN_CAPACITY, 2, "web", max_size=10))
    web = doc["node_groups"][0]
    assert (web["count"], web["max"]) == (5, 10)


def test_resize_without_a_group_name_is_refused_when_there_are_two() -> None:
    with pytest.raises(Invalid) as refused:
        edits.resize(_doc(), edits.Resize(Adjustment.EXACT_CAPACITY, 1))
    assert refused.value.problems == [
        Problem("/nodegroup", "required when a cluster has more than one node group")
    ]
    assert refused.value.kind is ErrorKind.INVALID


def test_remove_nodes_takes_whole_replicas_and_instances_and_names_the_victims() -> None:
    nodes = [_node("web-1", "web", 1), _node("web-2", "web", 2), _node("bastion", "bastion", 0)]
    doc, victims = edits.remove_nodes(_doc(), nodes, ["web-2", "id-bastion"])
    assert victims == ["web-2"]
    assert doc["node_groups"][0]["count"] == 2
    assert doc["instances"] == []
    assert doc["groupings"] == [{"name": "spread", "members": ["web", "db"]}]


def test_remove_nodes_names_every_unknown_node_and_keeps_the_group_min() -> None:
    nodes = [_node("web-1", "web", 1), _node("web-2", "web", 2)]
    with pytest.raises(NotFound) as missing:
        edits.remove_nodes(_doc(), nodes, ["nope", "web-1", "gone"])
    assert [p.path for p in missing.value.problems] == ["/nodes/0", "/nodes/2"]
    with pytest.raises(Conflict) as below:
        edits.remove_nodes(_doc(), nodes, ["web-1", "web-2"])
    assert below.value.problems == [Problem("/nodes/1", "below the group's min")]


def test_node_group_changes_name_every_read_only_field() -> None:
    with pytest.raises(Invalid) as refused:
        edits.update_node_group(_doc(), "web", {"name": "x", "count": 4, "bogus": 1})
    assert [p.path for p in refused.value.problems] == ["/bogus", "/name"]
    doc = edits.update_node_group(_doc(), "web", {"count": 4})
    assert doc["node_groups"][0]["count"] == 4


def test_deleting_a_group_others_depend_on_is_refused_else_its_members_go() -> None:
    doc = _doc()
    doc["node_groups"][1]["depends_on"] = ["web"]
    with pytest.raises(Conflict):
        edits.delete_node_group(copy.deepcopy(doc), "web")
    out = edits.delete_node_group(_doc(), "web")
    assert [g["name"] for g in out["node_groups"]] == ["db"]
    assert out["groupings"] == [{"name": "spread", "members": ["bastion", "db"]}]


def test_a_cluster_cannot_be_renamed_by_a_new_document() -> None:
    with pytest.raises(Invalid) as refused:
        edits.replace_document(_doc(), dict(_doc(), name="other"))
    assert refused.value.problems[0].path == "/name"
    assert edits.replace_document(_doc(), _doc()) == _doc()


def test_added_groups_and_instances_are_copies() -> None:
    group = {"name": "cache", "count": 1}
    doc = edits.add_node_group(_doc(), group)
    group["count"] = 9
    assert doc["node_groups"][-1] == {"name": "cache", "count": 1}
    doc = edits.add_instances(_doc(), [{"name": "jump"}])
    assert [i["name"] for i in doc["instances"]] == ["bastion", "jump"]

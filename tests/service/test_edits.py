"""The edits of cluster requests as values, on plain documents: no database, no engine."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from shoal.documents import cluster_from_tree
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ClusterStatus
from shoal.model.problems import Problem
from shoal.service import edits
from shoal.service.effects import JoinNodes, LeaveNodes, ScaledAt, Triggered
from shoal.service.errors import (
    Conflict,
    ErrorKind,
    Invalid,
    NotFound,
    NotReleasable,
    OutOfBounds,
)
from shoal.service.resize import Adjustment
from shoal.store.records import ClusterRecord, NodeRecord
from tests.support.records import node_record


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
    return node_record(
        name, group_name=group, replica=replica, host="h1", provider_id="x", ram_mb=1
    )


SCENE = edits.Scene(cluster=None)


def _on(doc: dict[str, Any], *changes: edits.Edit, nodes: list[NodeRecord] | None = None) -> Any:
    """The edits applied to `doc` of an existing cluster with `nodes`."""
    scene = edits.Scene(_cluster(doc), tuple(nodes or ()), None, 100.0)
    return edits.apply_all(changes, doc, scene)


def _cluster(doc: dict[str, Any], scaled_at: dict[str, float] | None = None) -> ClusterRecord:
    return ClusterRecord(
        id="c1",
        project_id="p",
        name=doc["name"],
        status=ClusterStatus.ACTIVE,
        status_reason="",
        document=copy.deepcopy(doc),
        source_format="native",
        generation=1,
        lock_action_id=None,
        created_at=0.0,
        updated_at=0.0,
        deleted_at=None,
        scaled_at=scaled_at or {},
    )


def test_resize_sets_the_count_and_bounds_of_the_named_group() -> None:
    out = _on(_doc(), edits.Resize(Adjustment.CHANGE_IN_CAPACITY, 2, "web", max_size=10))
    web = out.document["node_groups"][0]
    assert (web["count"], web["max"]) == (5, 10)
    assert (out.victims, out.effects) == ((), ())


def test_a_negative_max_size_lifts_the_upper_bound() -> None:
    doc = _doc()
    doc["node_groups"][0]["max"] = 4
    out = _on(doc, edits.Resize(Adjustment.EXACT_CAPACITY, 9, "web", max_size=-1))
    assert out.document["node_groups"][0] == {
        "name": "web",
        "count": 9,
        "min": 2,
        "profile": {"flavor": "m1", "image": "i"},
    }


def test_a_resize_outside_the_bounds_carries_the_numbers() -> None:
    with pytest.raises(OutOfBounds) as refused:
        _on(_doc(), edits.Resize(Adjustment.EXACT_CAPACITY, 1, "web"))
    assert (refused.value.current, refused.value.low, refused.value.high) == (3, 2, None)
    assert refused.value.kind is ErrorKind.CONFLICT


def test_resize_without_a_group_name_is_refused_when_there_are_two() -> None:
    with pytest.raises(Invalid) as refused:
        _on(_doc(), edits.Resize(Adjustment.EXACT_CAPACITY, 1))
    assert refused.value.problems == [
        Problem("/nodegroup", "required when a cluster has more than one node group")
    ]
    assert refused.value.kind is ErrorKind.INVALID


def test_one_group_lookup_words_its_refusals_as_each_face_asks() -> None:
    with pytest.raises(NotFound) as native:
        edits.group_name(["web", "db"], "nope", "c")
    assert str(native.value) == "no node group 'nope'"
    assert native.value.problems == [Problem("/nodegroup", "no node group 'nope'")]
    with pytest.raises(NotFound) as receiver:
        edits.group_name(["web", "db"], "nope", "c", edits.RECEIVER)
    assert str(receiver.value) == "no node group 'nope' in cluster c"
    quiet = edits.GroupWording(ambiguous="{cluster} has {count}: {names}", pointer=None)
    with pytest.raises(Invalid) as unnamed:
        edits.group_name(["web", "db"], None, "c", quiet)
    assert (str(unnamed.value), unnamed.value.problems) == ("c has 2: web, db", [])
    assert edits.group_name(["web"], None, "c") == "web"


def test_remove_nodes_takes_whole_replicas_and_instances_and_names_the_victims() -> None:
    nodes = [_node("web-1", "web", 1), _node("web-2", "web", 2), _node("bastion", "bastion", 0)]
    out = _on(_doc(), edits.RemoveNodes(("web-2", "id-bastion")), nodes=nodes)
    assert out.victims == ("web-2",)
    assert out.document["node_groups"][0]["count"] == 2
    assert out.document["instances"] == []
    assert out.document["groupings"] == [{"name": "spread", "members": ["web", "db"]}]


def test_remove_nodes_names_every_unknown_node_and_keeps_the_group_min() -> None:
    nodes = [_node("web-1", "web", 1), _node("web-2", "web", 2)]
    with pytest.raises(NotFound) as missing:
        _on(_doc(), edits.RemoveNodes(("nope", "web-1", "gone")), nodes=nodes)
    assert [p.path for p in missing.value.problems] == ["/nodes/0", "/nodes/2"]
    with pytest.raises(Conflict) as below:
        _on(_doc(), edits.RemoveNodes(("web-1", "web-2")), nodes=nodes)
    assert below.value.problems == [Problem("/nodes/1", "below the group's min")]


def test_node_group_changes_name_every_read_only_field_when_the_edit_is_made() -> None:
    with pytest.raises(Invalid) as refused:
        edits.UpdateGroup("web", {"name": "x", "count": 4, "bogus": 1})
    assert [p.path for p in refused.value.problems] == ["/bogus", "/name"]
    out = _on(_doc(), edits.UpdateGroup("web", {"count": 4}))
    assert out.document["node_groups"][0]["count"] == 4


def test_deleting_a_group_others_depend_on_is_refused_else_its_members_go() -> None:
    doc = _doc()
    doc["node_groups"][1]["depends_on"] = ["web"]
    with pytest.raises(Conflict):
        _on(copy.deepcopy(doc), edits.DeleteGroup("web"))
    out = _on(_doc(), edits.DeleteGroup("web")).document
    assert [g["name"] for g in out["node_groups"]] == ["db"]
    assert out["groupings"] == [{"name": "spread", "members": ["bastion", "db"]}]


def test_a_cluster_cannot_be_renamed_by_a_new_document_but_a_new_one_takes_any_name() -> None:
    with pytest.raises(Invalid) as refused:
        _on(_doc(), edits.ReplaceDocument(dict(_doc(), name="other")))
    assert refused.value.problems[0].path == "/name"
    assert _on(_doc(), edits.ReplaceDocument(_doc())).document == _doc()
    first = edits.ReplaceDocument(dict(_doc(), name="other")).apply({}, SCENE)
    assert first.document["name"] == "other"


def test_added_groups_and_instances_are_copies() -> None:
    group = {"name": "cache", "count": 1}
    change = edits.AddGroup(group)
    group["count"] = 9
    assert _on(_doc(), change).document["node_groups"][-1] == {"name": "cache", "count": 9}
    out = _on(_doc(), edits.AddGroup({"name": "cache", "count": 1}))
    out.document["node_groups"][-1]["count"] = 5
    assert _on(_doc(), edits.AddInstances(({"name": "jump"},))).document["instances"][-1] == {
        "name": "jump"
    }


def test_adopted_and_released_nodes_name_their_store_writes_as_data() -> None:
    bastion = _node("bastion", "bastion", 0)
    web = _node("web-3", "web", 3)
    stray = _node("stray", "", 0)
    out = _on(_doc(), edits.ReleaseNodes((bastion, web)), edits.AdoptNodes((stray,)))
    assert out.document["node_groups"][0]["count"] == 2
    assert [i["name"] for i in out.document["instances"]] == ["stray"]
    assert out.effects == (
        LeaveNodes(("id-bastion", "id-web-3")),
        JoinNodes(("id-stray",), ("stray",)),
    )
    at_min = _doc()
    at_min["node_groups"][0]["count"] = 2
    with pytest.raises(NotReleasable):
        _on(at_min, edits.ReleaseNodes((web,)))


def test_a_receivers_scale_decides_its_count_and_names_its_writes() -> None:
    spec = cluster_from_tree(_spec_doc(), default_inventory())
    doc = _spec_doc()
    scene = edits.Scene(_cluster(doc), (), spec, 1000.0)
    change = edits.ScaleByPolicy("r1", "web", {"count": 2, "max_size": 6}, out=True)
    out = change.apply(copy.deepcopy(doc), scene)
    assert out.document["node_groups"][0]["count"] == 5
    assert out.document["node_groups"][0]["max"] == 6
    assert out.effects == (ScaledAt("web"), Triggered("r1"))
    assert out.decided["count"] == 5
    assert (out.decided["min_size"], out.decided["max_size"]) == (0, 6)
    cooling = edits.Scene(_cluster(doc, {"web": 990.0}), (), spec, 1000.0)
    with pytest.raises(Conflict):
        change.apply(copy.deepcopy(doc), cooling)


def _spec_doc() -> dict[str, Any]:
    return {
        "name": "c",
        "node_groups": [
            {
                "name": "web",
                "count": 3,
                "profile": {"type": "server", "flavor": "m1.small", "image": "cirros"},
                "scaling": {"cooldown_s": 60},
            }
        ],
    }

"""The vcluster format beyond the seed: list forms, pointers of repeated keys, its own mistakes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shoal.documents import load_cluster
from shoal.model import Inventory, VolumeProfile
from tests.documents.support import ProblemsOf

SERVER: dict[str, Any] = {
    "name": "s1",
    "type": "server",
    "spec": {"imageRef": "cirros", "flavorRef": "1"},
}
VOLUME: dict[str, Any] = {"name": "v1", "type": "volume", "spec": {"size": 5}}
GROUPING: dict[str, Any] = {"name": "g1", "membersRef": ["s1", "v1"], "spec": {"rule": "affinity"}}


def vcluster(instances: object, groupings: object = None, **extra: object) -> str:
    body: dict[str, object] = {"name": "vc", "instances": instances, **extra}
    if groupings is not None:
        body["groupings"] = groupings
    return json.dumps({"vcluster": body})


def test_lists_are_accepted(inventory: Inventory) -> None:
    spec = load_cluster(vcluster([SERVER, {"instance": VOLUME}], [GROUPING]), inventory)
    assert [i.name for i in spec.instances] == ["s1", "v1"]
    assert spec.groupings[0].name == "g1"


def test_block_storage_is_a_volume(inventory: Inventory) -> None:
    spec = load_cluster(vcluster([{**VOLUME, "type": "block-storage"}]), inventory)
    assert isinstance(spec.instances[0].profile, VolumeProfile)


def test_availability_zone_and_metadata(inventory: Inventory) -> None:
    server = {
        **SERVER,
        "spec": {
            **SERVER["spec"],
            "availability_zone": "az2",
            "metadata": {"a": "b"},
        },
    }
    spec = load_cluster(vcluster([server]), inventory)
    assert spec.instances[0].profile.zone == "az2"


def repeated(entries: list[tuple[str, dict[str, Any]]]) -> str:
    """An "instances" object with repeated keys, written by hand (json.dumps cannot)."""
    inner = ", ".join(f'"{key}": {json.dumps(value)}' for key, value in entries)
    return '{"vcluster": {"name": "vc", "instances": {' + inner + "}}}"


CASES: list[tuple[str, str, str, str]] = [
    (
        "third-entry",
        repeated(
            [
                ("instance", SERVER),
                ("instance", VOLUME),
                ("instance", {**VOLUME, "name": "v2", "spec": {"size": "x"}}),
            ]
        ),
        "/vcluster/instances/2/spec/size",
        '"x" is a placeholder, not a size',
    ),
    (
        "wrong-key",
        repeated([("instance", SERVER), ("instanse", VOLUME)]),
        "/vcluster/instances/1",
        "unexpected key 'instanse' (did you mean 'instance'?)",
    ),
    (
        "repeated-elsewhere",
        '{"vcluster": {"name": "a", "name": "b", "instances": [' + json.dumps(SERVER) + "]}}",
        "/vcluster/name",
        "'name' is given more than once",
    ),
    ("no-instances", vcluster([]), "/vcluster/instances", "at least one instance"),
    ("instances-text", vcluster("s1"), "/vcluster/instances", 'expected "instance": {...}'),
    (
        "unknown-type",
        vcluster([{**SERVER, "type": "vm"}]),
        "/vcluster/instances/0/type",
        "choose server or volume",
    ),
    (
        "missing-spec",
        vcluster([{"name": "s1", "type": "server"}]),
        "/vcluster/instances/0/spec",
        "'spec' is missing",
    ),
    (
        "missing-image",
        vcluster([{**SERVER, "spec": {"flavorRef": "1"}}]),
        "/vcluster/instances/0/spec/imageRef",
        "a server needs an image",
    ),
    (
        "native-key-in-spec",
        vcluster([{**SERVER, "spec": {**SERVER["spec"], "flavor": "1"}}]),
        "/vcluster/instances/0/spec/flavor",
        "unknown field 'flavor' (did you mean 'flavorRef'?)",
    ),
    (
        "size-text",
        vcluster([{**VOLUME, "spec": {"size": "10"}}]),
        "/vcluster/instances/0/spec/size",
        "write it without quotes",
    ),
    (
        "unknown-zone",
        vcluster([{**VOLUME, "spec": {"size": 1, "availability_zone": "nova"}}]),
        "/vcluster/instances/0/spec/availability_zone",
        "unknown zone 'nova'",
    ),
    (
        "members-as-text",
        vcluster([SERVER, VOLUME], [{**GROUPING, "membersRef": "s1, v1"}]),
        "/vcluster/groupings/0/membersRef",
        "expected a list of instance names",
    ),
    (
        "unknown-member",
        vcluster([SERVER, VOLUME], [{**GROUPING, "membersRef": ["s1", "v2"]}]),
        "/vcluster/groupings/0/membersRef/1",
        "unknown member 'v2'",
    ),
    (
        "rule-missing",
        vcluster([SERVER, VOLUME], [{**GROUPING, "spec": {}}]),
        "/vcluster/groupings/0/spec/rule",
        "'rule' is missing",
    ),
    (
        "conflict",
        vcluster(
            [SERVER, VOLUME],
            [GROUPING, {**GROUPING, "name": "g2", "spec": {"rule": "anti-affinity"}}],
        ),
        "/vcluster/groupings/1",
        "keeps 's1' and 'v1' apart",
    ),
    (
        "duplicate-instance",
        vcluster([SERVER, SERVER]),
        "/vcluster/instances/1/name",
        "already used by the instance at /vcluster/instances/0",
    ),
    (
        "extra-top-key",
        '{"vcluster": {"name": "a", "instances": [' + json.dumps(SERVER) + ']}, "tenant": "t"}',
        "/tenant",
        "unknown field 'tenant'",
    ),
    ("vcluster-not-object", '{"vcluster": []}', "/vcluster", "must be a mapping"),
]


@pytest.mark.parametrize(
    ("text", "path", "phrase"),
    [pytest.param(text, path, phrase, id=case) for case, text, path, phrase in CASES],
)
def test_vcluster_mistakes(problems_of: ProblemsOf, text: str, path: str, phrase: str) -> None:
    problems = problems_of(text)
    assert [p.path for p in problems] == [path], problems
    assert phrase in problems[0].message

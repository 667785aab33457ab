"""Whatever the input, the loaders return a model or raise InvalidDocument: nothing else."""

from __future__ import annotations

import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoal.documents import cluster_from_tree, inventory_from_tree, load_cluster, load_inventory
from shoal.model import ClusterSpec, InvalidDocument, Inventory
from shoal.model.catalogs import default_inventory

INVENTORY: Inventory = default_inventory()

KEYS = [
    "name",
    "objective",
    "metadata",
    "profiles",
    "instances",
    "node_groups",
    "groupings",
    "profile",
    "unit",
    "type",
    "flavor",
    "image",
    "zone",
    "zones",
    "size",
    "volume_type",
    "count",
    "min",
    "max",
    "labels",
    "role",
    "depends_on",
    "members",
    "rule",
    "scope",
    "max_per_domain",
    "max_skew",
    "vcluster",
    "instance",
    "grouping",
    "spec",
    "imageRef",
    "flavorRef",
    "availability_zone",
    "membersRef",
    "hosts",
    "flavors",
    "images",
    "vcpus",
    "ram_mb",
    "disk_gb",
    "volume_gb",
    "id",
    "networks",
    "server",
    "data",
    "health",
    "update",
    "deletion",
    "scaling",
    "strays",
    "check",
    "path",
    "port",
    "expected_codes",
    "interval_s",
    "timeout_s",
    "failures",
    "grace_s",
    "recovery",
    "max_unhealthy",
    "max_unavailable",
    "max_surge",
    "pause_s",
    "health_gate",
    "gate_timeout_s",
    "failure_threshold",
    "victims",
    "balance_zones",
    "adjustment_type",
    "number",
    "min_step",
    "cooldown_s",
    "strict",
]
WORDS = [
    "web",
    "db",
    "app",
    "web-1",
    "db-1-data",
    "db/data",
    "db/server",
    "web/x",
    "az1",
    "az2",
    "az9",
    "m1.small",
    "2",
    "cirros",
    "server",
    "volume",
    "block-storage",
    "affinity",
    "anti-affinity",
    "soft-affinity",
    "spread",
    "host",
    "zone",
    "pack",
    "x",
    "",
    "a b",
    "http",
    "tcp",
    "provider",
    "/health",
    "40%",
    "150%",
    "replace",
    "oldest_first",
    "EXACT_CAPACITY",
    "CHANGE_IN_PERCENTAGE",
    "delete",
]

leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=5)
    | st.integers()
    | st.floats(allow_nan=True)
    | st.sampled_from(WORDS)
    | st.text(max_size=8)
)
trees = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner, max_size=6)
    ),
    max_leaves=40,
)
documents = st.dictionaries(st.sampled_from(KEYS), trees, max_size=8) | trees


def _only_invalid_document(load: object) -> None:
    try:
        if callable(load):
            load()
    except InvalidDocument as err:
        assert err.problems
        assert all(p.path == "" or p.path.startswith("/") for p in err.problems)
        assert all(p.message for p in err.problems)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents)
def test_any_tree(tree: object) -> None:
    _only_invalid_document(lambda: cluster_from_tree(tree, INVENTORY))
    _only_invalid_document(lambda: inventory_from_tree(tree))
    _only_invalid_document(lambda: cluster_from_tree({"vcluster": tree}, INVENTORY))


@settings(max_examples=200, deadline=None)
@given(documents)
def test_any_tree_as_json_and_yaml_text(tree: object) -> None:
    text = json.dumps(tree)
    _only_invalid_document(lambda: load_cluster(text, INVENTORY))
    _only_invalid_document(lambda: load_cluster(yaml.safe_dump(tree), INVENTORY))


@settings(max_examples=300, deadline=None)
@given(st.text() | st.binary())
def test_any_text(text: str | bytes) -> None:
    _only_invalid_document(lambda: load_cluster(text, INVENTORY))
    _only_invalid_document(lambda: load_inventory(text))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "{",
                "}",
                "[",
                "]",
                ":",
                ",",
                '"vcluster"',
                '"instance"',
                '"x"',
                "x",
                "1",
                "\n",
                " ",
                "- ",
                "name: ",
                "\t",
                "&a ",
                "*a",
                "<<: ",
                "!!str ",
            ]
        ),
        max_size=30,
    )
)
def test_near_miss_syntax(tokens: list[str]) -> None:
    _only_invalid_document(lambda: load_cluster("".join(tokens), INVENTORY))


def test_valid_structure_still_loads() -> None:
    spec = cluster_from_tree(
        {
            "name": "c",
            "node_groups": [{"name": "w", "profile": {"type": "volume", "size": 1}, "count": 1}],
        },
        INVENTORY,
    )
    assert isinstance(spec, ClusterSpec)


def _paths(tree: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found = [prefix]
    if isinstance(tree, dict):
        for k, v in tree.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            found += _paths(v, (*prefix, i))
    return found


def _replace(tree: object, path: tuple[object, ...], value: object, delete: bool) -> object:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        copy = dict(tree)
        if delete and not rest:
            copy.pop(head, None)
        else:
            copy[head] = _replace(copy[head], rest, value, delete)
        return copy
    if isinstance(tree, list):
        items = list(tree)
        assert isinstance(head, int)
        if delete and not rest:
            del items[head]
        else:
            items[head] = _replace(items[head], rest, value, delete)
        return items
    return tree


def _example(name: str) -> object:
    from tests.documents.support import EXAMPLES

    text = (EXAMPLES / name).read_text()
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


EXAMPLE_TREES = [
    _example(n) for n in ("three-tier.yaml", "db-pair.yaml", "magnum.yaml", "vcluster-seed.json")
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(EXAMPLE_TREES),
    st.lists(st.tuples(st.integers(min_value=0), trees, st.booleans()), min_size=1, max_size=4),
)
def test_mutated_examples(tree: object, mutations: list[tuple[int, object, bool]]) -> None:
    """Valid documents with a few parts replaced or deleted: deep paths through every check."""
    for index, value, delete in mutations:
        paths = _paths(tree)
        tree = _replace(tree, paths[index % len(paths)], value, delete)
    _only_invalid_document(lambda: cluster_from_tree(tree, INVENTORY))

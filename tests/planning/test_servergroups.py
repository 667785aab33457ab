"""Which Nova server group each server joins when Shoal places as a tenant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shoal.documents import cluster_from_tree, load_cluster
from shoal.model.catalogs import default_inventory
from shoal.planning.servergroups import ServerGroups

SEED = Path(__file__).resolve().parents[2] / "examples" / "vcluster-seed.json"
TINY = {"type": "server", "flavor": "m1.tiny", "image": "cirros"}


def groups_of(doc: dict[str, Any]) -> ServerGroups:
    return ServerGroups(cluster_from_tree(doc, default_inventory()))


def test_the_seeds_servers_join_their_anti_affinity_not_their_volume_pairs() -> None:
    spec = load_cluster(SEED.read_bytes(), default_inventory())
    groups = ServerGroups(spec)
    hint = {"grouping": "group-3", "policy": "anti-affinity", "max_per_host": None}
    assert groups.of("db-server-1", None) == hint
    assert groups.of("db-server-2", None) == hint
    assert groups.of("db-vol-1", None) is None  # volumes join no server group


def test_hard_rules_win_then_bigger_groupings_and_max_per_host_is_kept() -> None:
    doc = {
        "name": "c",
        "node_groups": [
            {"name": "web", "profile": TINY, "count": 4},
            {"name": "api", "profile": TINY, "count": 2},
        ],
        "groupings": [
            {"name": "loose", "members": ["web", "api"], "rule": "soft-anti-affinity"},
            {"name": "web-apart", "members": ["web"], "rule": "anti-affinity", "max_per_domain": 2},
            {"name": "api-zones", "members": ["api"], "rule": "anti-affinity", "scope": "zone"},
        ],
    }
    groups = groups_of(doc)
    assert groups.of("web", None) == {
        "grouping": "web-apart",
        "policy": "anti-affinity",
        "max_per_host": 2,
    }
    # api's only host-level grouping is the soft one; zone-scoped rules are Shoal's alone.
    assert groups.of("api", None) == {
        "grouping": "loose",
        "policy": "soft-anti-affinity",
        "max_per_host": None,
    }


def test_a_grouping_of_one_server_or_spread_makes_no_server_group() -> None:
    doc = {
        "name": "c",
        "node_groups": [
            {"name": "solo", "profile": TINY, "count": 1},
            {"name": "many", "profile": TINY, "count": 3},
        ],
        "groupings": [
            {"name": "alone", "members": ["solo"], "rule": "affinity"},
            {"name": "even", "members": ["many"], "rule": "spread"},
        ],
    }
    groups = groups_of(doc)
    assert groups.of("solo", None) is None
    assert groups.of("many", None) is None

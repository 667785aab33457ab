"""Documents near a mistake that are nevertheless valid: the checks must not cry wolf."""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster
from shoal.model import Inventory, MemberRef, Rule, Scope, ServerProfile

HEAD = """\
name: shop
profiles:
  web-server: {type: server, flavor: m1.small, image: cirros}
  db-server: {type: server, flavor: '4', image: 8a1f4e6c-0c8b-4b7e-9d3a-2f0c6e1d5a10}
  db-data: {type: volume, size: 20}
node_groups:
  - {name: web, profile: web-server, count: 3}
  - {name: db, unit: {server: db-server, data: db-data}, count: 2}
"""

VALID: list[tuple[str, str]] = [
    (
        "affinity-zone-with-anti-host",
        "groupings:\n  - {name: a, members: [web, db], rule: affinity, scope: zone}\n"
        "  - {name: b, members: [web, db], rule: anti-affinity, scope: host}\n",
    ),
    (
        "anti-affinity-two-per-host",
        "groupings:\n  - {name: a, members: [web, db], rule: affinity}\n"
        "  - {name: b, members: [web, db], rule: anti-affinity, max_per_domain: 2}\n",
    ),
    (
        "soft-rules-never-contradict",
        "groupings:\n  - {name: a, members: [web, db], rule: soft-affinity}\n"
        "  - {name: b, members: [web, db], rule: anti-affinity}\n",
    ),
    ("unit-replicas-apart", "groupings:\n  - {name: a, members: [db], rule: anti-affinity}\n"),
    (
        "one-unit-part-apart-from-a-group",
        "groupings:\n  - {name: a, members: [db/data, web], rule: anti-affinity}\n",
    ),
    (
        "instance-with-group-like-name",
        "instances:\n  - {name: web-0, profile: db-data}\n"
        "  - {name: web-01, profile: db-data}\n  - {name: webx-1, profile: db-data}\n",
    ),
    (
        "instance-beyond-max",
        "  - {name: app, profile: web-server, count: 1, max: 2}\n"
        "instances:\n  - {name: app-3, profile: db-data}\n",
    ),
    ("null-sections", "instances:\ngroupings:\n"),
    ("empty-count", "  - {name: spare, profile: web-server, count: 0, max: 0}\n"),
    (
        "dependency-chain",
        "  - {name: app, profile: web-server, count: 1, depends_on: [db]}\n"
        "instances:\n  - {name: lb, profile: web-server, depends_on: [web, app]}\n",
    ),
]


@pytest.mark.parametrize("body", [pytest.param(b, id=case) for case, b in VALID])
def test_valid(inventory: Inventory, body: str) -> None:
    load_cluster(HEAD + body, inventory)


def test_grouping_defaults_and_part_members(inventory: Inventory) -> None:
    spec = load_cluster(
        HEAD + "groupings:\n  - {name: g, members: [db/data, web], rule: soft-anti-affinity,"
        " scope: zone, max_per_domain: 2}\n",
        inventory,
    )
    (g,) = spec.groupings
    assert g.members == (MemberRef("db", "data"), MemberRef("web"))
    assert (g.rule, g.scope, g.max_per_domain, g.max_skew) == (
        Rule.SOFT_ANTI_AFFINITY,
        Scope.ZONE,
        2,
        1,
    )


def test_flavor_and_image_by_id_or_name(inventory: Inventory) -> None:
    spec = load_cluster(HEAD, inventory)
    db = spec.node_groups[1].parts[0].profile
    assert isinstance(db, ServerProfile)
    assert db.name == "db-server"
    assert db.flavor.name == "m1.large"
    assert db.image.name == "cirros"

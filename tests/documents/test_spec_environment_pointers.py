"""A problem in what an environment's role put into the document points into the environment.

The concrete document has a node group's profile or count, an instance or a grouping that the
document itself does not contain; a pointer past the document's own lists would send the user
looking for something that is not there.
"""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster
from shoal.documents.syntax import parse
from shoal.model import InvalidDocument, Inventory, Problem

DOC = """
name: c
profiles:
  p: {type: server, flavor: m1.tiny, image: cirros}
instances:
  - {name: db, profile: p}
node_groups:
  - {name: web, profile: p, count: 2, role: Web, zones: [az1], depends_on: [db]}
groupings:
  - {name: web-host-apart, members: [db], rule: anti-affinity, scope: host}
"""


def problems(inventory: Inventory, *envs: str, doc: str = DOC) -> list[Problem]:
    with pytest.raises(InvalidDocument) as bad:
        load_cluster(doc, inventory, environments=[parse(e, "env.yaml") for e in envs])
    return bad.value.problems


def test_a_bad_profile_in_a_role_points_at_the_role(inventory: Inventory) -> None:
    found = problems(
        inventory,
        "roles: {Web: {count: 3}}",
        "roles: {Web: {profile: {type: server, flavor: m1.nope, image: cirros}}}",
    )
    assert [p.path for p in found] == ["/environment/1/roles/Web/profile/flavor"]
    assert "m1.nope" in found[0].message


def test_a_role_made_an_instance_points_at_the_environment_or_the_group(
    inventory: Inventory,
) -> None:
    found = problems(
        inventory,
        "roles: {Web: {shape: instance, profile: {type: server, flavor: m1.nope, image: x}}}",
    )
    paths = sorted(p.path for p in found)
    assert paths == [
        "/environment/0/roles/Web/profile/flavor",
        "/environment/0/roles/Web/profile/image",
    ]


def test_a_grouping_an_anti_affinity_made_points_at_it(inventory: Inventory) -> None:
    # The document already has a grouping named as the one `anti_affinity` makes.
    found = problems(inventory, "roles: {Web: {anti_affinity: host}}")
    assert [p.path for p in found] == ["/environment/0/roles/Web/anti_affinity"]
    assert "web-host-apart" in found[0].message


def test_the_document_s_own_problems_keep_their_pointers(inventory: Inventory) -> None:
    doc = DOC.replace("depends_on: [db]", "depends_on: [nothing]")
    found = problems(inventory, "roles: {Web: {count: 3}}", doc=doc)
    assert [p.path for p in found] == ["/node_groups/0/depends_on/0"]

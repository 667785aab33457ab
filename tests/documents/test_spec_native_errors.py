"""One case per kind of mistake in the native format: the pointer, and a phrase of the message.

Each case has exactly one mistake and must yield exactly one problem, so a mistake is never
reported twice or followed by a cascade of follow-on problems.
"""

from __future__ import annotations

import pytest

from tests.documents.support import ProblemsOf

HEAD = """\
name: shop
profiles:
  web-server: {type: server, flavor: m1.small, image: cirros}
  db-server: {type: server, flavor: m1.large, image: cirros}
  db-data: {type: volume, size: 20}
"""

WEB = """
  - name: web
    profile: web-server
    count: 3
"""

DB = """
  - name: db
    unit: {server: db-server, data: db-data}
    count: 2
"""

# (id, document after HEAD, pointer, phrase)
CASES: list[tuple[str, str, str, str]] = [
    # --- fields and types
    ("unknown-top-field", "nodegroups: []\n", "/nodegroups", "did you mean 'node_groups'"),
    (
        "unknown-group-field",
        "node_groups:" + WEB + "    countt: 3\n",
        "/node_groups/0/countt",
        "unknown field 'countt' (did you mean 'count'?)",
    ),
    (
        "count-missing",
        "node_groups:\n  - {name: web, profile: web-server}\n",
        "/node_groups/0/count",
        "'count' is missing",
    ),
    (
        "count-negative",
        "node_groups:\n  - {name: web, profile: web-server, count: -1}\n",
        "/node_groups/0/count",
        "must be at least 0",
    ),
    (
        "count-quoted",
        "node_groups:\n  - {name: web, profile: web-server, count: '3'}\n",
        "/node_groups/0/count",
        "write it without quotes",
    ),
    (
        "count-fraction",
        "node_groups:\n  - {name: web, profile: web-server, count: 2.5}\n",
        "/node_groups/0/count",
        "expected a whole number",
    ),
    (
        "count-bool",
        "node_groups:\n  - {name: web, profile: web-server, count: true}\n",
        "/node_groups/0/count",
        "found true",
    ),
    ("objective", "objective: packed\n", "/objective", "did you mean 'pack'"),
    (
        "node-groups-mapping",
        "node_groups: {web: {count: 3}}\n",
        "/node_groups",
        "expected a list of node groups",
    ),
    (
        "group-not-mapping",
        "node_groups: [web]\n",
        "/node_groups/0",
        "a node group must be a mapping",
    ),
    ("metadata-value", "metadata: {replicas: 3}\n", "/metadata/replicas", "expected text"),
    (
        "labels-list",
        "node_groups:" + WEB + "    labels: [web]\n",
        "/node_groups/0/labels",
        "expected a mapping of text to text",
    ),
    (
        "repeated-key",
        "profiles:\n  a: {type: volume, size: 1}\n",
        "/profiles",
        "given more than once",
    ),
    (
        "invalid-group-name",
        "node_groups:\n  - {name: 'my web', profile: web-server, count: 1}\n",
        "/node_groups/0/name",
        "is not a valid name",
    ),
    (
        "slash-in-name",
        "instances:\n  - {name: db/1, profile: db-server}\n",
        "/instances/0/name",
        "is not a valid name",
    ),
    (
        "invalid-part-name",
        "node_groups:\n  - {name: db, unit: {'a b': db-data}, count: 1}\n",
        "/node_groups/0/unit/a b",
        "not a valid part name",
    ),
    # --- profiles and catalog
    (
        "profile-and-unit",
        "node_groups:" + WEB + "    unit: {data: db-data}\n",
        "/node_groups/0",
        "not both",
    ),
    (
        "no-profile",
        "node_groups:\n  - {name: web, count: 1}\n",
        "/node_groups/0/profile",
        "'profile' is missing",
    ),
    (
        "unknown-profile",
        "node_groups:\n  - {name: web, profile: web-srv, count: 1}\n",
        "/node_groups/0/profile",
        "unknown profile 'web-srv' (did you mean 'web-server'?)",
    ),
    (
        "profile-wrong-type",
        "node_groups:\n  - {name: web, profile: 7, count: 1}\n",
        "/node_groups/0/profile",
        "expected a profile name or a profile mapping",
    ),
    (
        "unknown-flavor",
        "instances:\n  - {name: a, profile: {type: server, flavor: m1.smal, image: cirros}}\n",
        "/instances/0/profile/flavor",
        "unknown flavor 'm1.smal'",
    ),
    (
        "unknown-image",
        "instances:\n  - {name: a, profile: {type: server, flavor: '2', image: ubuntu}}\n",
        "/instances/0/profile/image",
        "known images: cirros",
    ),
    (
        "missing-flavor",
        "instances:\n  - {name: a, profile: {type: server, image: cirros}}\n",
        "/instances/0/profile/flavor",
        "a server needs a flavor",
    ),
    (
        "unknown-profile-type",
        "instances:\n  - {name: a, profile: {type: vm}}\n",
        "/instances/0/profile/type",
        "choose server or volume",
    ),
    (
        "size-placeholder",
        "instances:\n  - {name: a, profile: {type: volume, size: x}}\n",
        "/instances/0/profile/size",
        '"x" is a placeholder, not a size',
    ),
    (
        "size-zero",
        "instances:\n  - {name: a, profile: {type: volume, size: 0}}\n",
        "/instances/0/profile/size",
        "must be at least 1",
    ),
    (
        "server-field-on-volume",
        "instances:\n  - {name: a, profile: {type: volume, size: 1, flavor: m1.tiny}}\n",
        "/instances/0/profile/flavor",
        "unknown field 'flavor'",
    ),
    (
        "empty-unit",
        "node_groups:\n  - {name: db, unit: {}, count: 1}\n",
        "/node_groups/0/unit",
        "at least one part",
    ),
    # --- zones
    (
        "unknown-zone",
        "node_groups:" + WEB + "    zones: [az1, az3]\n",
        "/node_groups/0/zones/1",
        "unknown zone 'az3'",
    ),
    (
        "zone-twice",
        "node_groups:" + WEB + "    zones: [az1, az1]\n",
        "/node_groups/0/zones/1",
        "listed twice",
    ),
    (
        "instance-unknown-zone",
        "instances:\n  - {name: a, profile: db-server, zone: eu-1}\n",
        "/instances/0/zone",
        "the inventory's zones are az1, az2",
    ),
    (
        "profile-zone-outside",
        "node_groups:\n  - name: web\n    profile: {type: server, "
        "flavor: m1.tiny, image: cirros, zone: az2}\n    count: 1\n    zones: [az1]\n",
        "/node_groups/0/profile",
        "pins zone az2, which is not one of this group's zones",
    ),
    (
        "unit-zones-differ",
        "node_groups:\n  - name: db\n    unit:\n      server: {type: server, "
        "flavor: m1.tiny, image: cirros, zone: az1}\n      data: {type: volume, size: 1, "
        "zone: az2}\n    count: 1\n",
        "/node_groups/0/unit",
        "pin different zones",
    ),
    (
        "instance-zone-vs-profile",
        "instances:\n  - name: a\n    profile: {type: volume, size: 1, zone: az2}\n    zone: az1\n",
        "/instances/0/zone",
        "its profile pins zone az2",
    ),
    # --- sizes
    (
        "min-above-max",
        "node_groups:" + WEB + "    min: 5\n    max: 4\n",
        "/node_groups/0/min",
        "min (5) is above max (4)",
    ),
    (
        "count-below-min",
        "node_groups:" + WEB + "    min: 4\n",
        "/node_groups/0/count",
        "count (3) is below min (4)",
    ),
    (
        "count-above-max",
        "node_groups:" + WEB + "    max: 2\n",
        "/node_groups/0/count",
        "count (3) is above max (2)",
    ),
    # --- names
    (
        "group-instance-same-name",
        "instances:\n  - {name: web, profile: db-server}\nnode_groups:" + WEB,
        "/node_groups/0/name",
        "already used by the instance at /instances/0",
    ),
    (
        "grouping-same-name",
        "node_groups:" + WEB + "groupings:\n"
        "  - {name: g, members: [web], rule: spread}\n"
        "  - {name: g, members: [web], rule: spread}\n",
        "/groupings/1/name",
        "already used by the grouping at /groupings/0",
    ),
    (
        "generated-name",
        "instances:\n  - {name: web-2, profile: db-server}\nnode_groups:" + WEB,
        "/instances/0/name",
        "is also the name of replica 2 of node group 'web'",
    ),
    (
        "generated-name-later",
        "instances:\n  - {name: web-7, profile: db-server}\nnode_groups:" + WEB,
        "/instances/0/name",
        "replica 7 of node group 'web' (at /node_groups/0) would get when the group scales out",
    ),
    (
        "generated-part-name",
        "instances:\n  - {name: db-1-data, profile: db-data}\nnode_groups:" + DB,
        "/instances/0/name",
        "is also the name of part 'data' of replica 1 of node group 'db'",
    ),
    # --- grouping members
    (
        "unknown-member",
        "node_groups:" + WEB + DB + "groupings:\n"
        "  - {name: g, members: [db, wbe], rule: anti-affinity}\n",
        "/groupings/0/members/1",
        "unknown member 'wbe': no node group or instance has this name (did you mean 'web'?)",
    ),
    (
        "unknown-part",
        "node_groups:" + DB + "groupings:\n  - {name: g, members: [db/disk], rule: spread}\n",
        "/groupings/0/members/0",
        "has no part 'disk'; its parts are server, data",
    ),
    (
        "part-of-plain-group",
        "node_groups:" + WEB + "groupings:\n  - {name: g, members: [web/data], rule: spread}\n",
        "/groupings/0/members/0",
        "has a single profile",
    ),
    (
        "part-of-instance",
        "instances:\n  - {name: a, profile: db-server}\ngroupings:\n"
        "  - {name: g, members: [a/data], rule: spread}\n",
        "/groupings/0/members/0",
        "is an instance and has no parts",
    ),
    (
        "bad-member-syntax",
        "node_groups:" + DB + "groupings:\n  - {name: g, members: [db/data/x], rule: spread}\n",
        "/groupings/0/members/0",
        "is not a member",
    ),
    (
        "empty-members",
        "groupings:\n  - {name: g, members: [], rule: spread}\n",
        "/groupings/0/members",
        "at least one member",
    ),
    (
        "missing-members",
        "groupings:\n  - {name: g, rule: spread}\n",
        "/groupings/0/members",
        "'members' is missing",
    ),
    (
        "member-twice",
        "node_groups:" + WEB + "groupings:\n  - {name: g, members: [web, web], rule: spread}\n",
        "/groupings/0/members/1",
        "listed twice",
    ),
    (
        "member-included",
        "node_groups:" + DB + "groupings:\n  - {name: g, members: [db, db/data], rule: spread}\n",
        "/groupings/0/members/1",
        "'db/data' is already included by 'db'",
    ),
    # --- rules
    (
        "unknown-rule",
        "node_groups:" + WEB + "groupings:\n  - {name: g, members: [web], rule: anti_affinity}\n",
        "/groupings/0/rule",
        "did you mean 'anti-affinity'",
    ),
    (
        "missing-rule",
        "node_groups:" + WEB + "groupings:\n  - {name: g, members: [web]}\n",
        "/groupings/0/rule",
        "'rule' is missing",
    ),
    (
        "unknown-scope",
        "node_groups:" + WEB + "groupings:\n"
        "  - {name: g, members: [web], rule: spread, scope: rack}\n",
        "/groupings/0/scope",
        "choose one of host, zone",
    ),
    (
        "skew-on-anti-affinity",
        "node_groups:" + WEB + "groupings:\n"
        "  - {name: g, members: [web], rule: anti-affinity, max_skew: 2}\n",
        "/groupings/0/max_skew",
        "max_skew only applies to spread",
    ),
    (
        "per-domain-on-spread",
        "node_groups:" + WEB + "groupings:\n"
        "  - {name: g, members: [web], rule: spread, max_per_domain: 2}\n",
        "/groupings/0/max_per_domain",
        "only applies to anti-affinity",
    ),
    (
        "per-domain-zero",
        "node_groups:" + WEB + "groupings:\n"
        "  - {name: g, members: [web], rule: anti-affinity, max_per_domain: 0}\n",
        "/groupings/0/max_per_domain",
        "must be at least 1",
    ),
    (
        "affinity-vs-anti-affinity",
        "node_groups:" + WEB + DB + "groupings:\n"
        "  - {name: together, members: [web, db], rule: affinity}\n"
        "  - {name: apart, members: [db, web], rule: anti-affinity}\n",
        "/groupings/1",
        "grouping 'apart' (anti-affinity, host) keeps 'web' and 'db' apart, but "
        "grouping 'together' (affinity, host)",
    ),
    (
        "anti-zone-vs-affinity-host",
        "node_groups:" + WEB + DB + "groupings:\n"
        "  - {name: apart, members: [web, db], rule: anti-affinity, scope: zone}\n"
        "  - {name: together, members: [web, db], rule: affinity}\n",
        "/groupings/1",
        "keeps 'web' and 'db' apart",
    ),
    (
        "affinity-vs-anti-one-group",
        "node_groups:" + WEB + "groupings:\n"
        "  - {name: together, members: [web], rule: affinity}\n"
        "  - {name: apart, members: [web], rule: anti-affinity}\n",
        "/groupings/1",
        "keeps the replicas of 'web' apart",
    ),
    (
        "unit-parts-apart",
        "node_groups:" + DB + "groupings:\n"
        "  - {name: g, members: [db/server, db/data], rule: anti-affinity}\n",
        "/groupings/0/members",
        "parts of the same unit and always share a host",
    ),
    (
        "affinity-zones-never-meet",
        "node_groups:"
        + WEB
        + "    zones: [az1]\n"
        + DB
        + "    zones: [az2]\ngroupings:\n  - {name: g, members: [web, db], rule: affinity}\n",
        "/groupings/0/members",
        "zones never meet",
    ),
    # --- dependencies
    (
        "unknown-dependency",
        "node_groups:" + WEB + "    depends_on: [ap]\n",
        "/node_groups/0/depends_on/0",
        "'ap' is not a node group or instance",
    ),
    (
        "self-dependency",
        "node_groups:" + WEB + "    depends_on: [web]\n",
        "/node_groups/0/depends_on/0",
        "'web' depends on itself",
    ),
    (
        "dependency-twice",
        "node_groups:" + WEB + "    depends_on: [db, db]\n" + DB,
        "/node_groups/0/depends_on/1",
        "listed twice",
    ),
    (
        "dependency-cycle",
        "node_groups:\n"
        "  - {name: app, profile: web-server, count: 1, depends_on: [db]}\n"
        "  - {name: db, profile: db-server, count: 1, depends_on: [cache]}\n"
        "  - {name: cache, profile: web-server, count: 1, depends_on: [app]}\n",
        "/node_groups/0/depends_on",
        "dependency cycle: app -> db -> cache -> app",
    ),
    (
        "depends-on-not-list",
        "node_groups:" + WEB + "    depends_on: db\n",
        "/node_groups/0/depends_on",
        "expected a list of node group or instance names",
    ),
]

# Documents that replace HEAD entirely.
FULL: list[tuple[str, str, str, str]] = [
    ("missing-name", "node_groups: []\n", "/name", "'name' is missing"),
    ("invalid-cluster-name", "name: my shop\n", "/name", "is not a valid name"),
    ("non-text-key", "name: shop\n1: x\n", "", "the key 1 is not a field name"),
    (
        "repeated-profile",
        "name: shop\nprofiles:\n  a: {type: volume, size: 1}\n  a: {type: volume, size: 2}\n",
        "/profiles/a",
        "'a' is given more than once",
    ),
    ("top-level-list", "- name: shop\n", "", "found a list"),
    ("top-level-number", "42\n", "", "found 42"),
]


@pytest.mark.parametrize(
    ("body", "path", "phrase"),
    [pytest.param(body, path, phrase, id=case) for case, body, path, phrase in CASES],
)
def test_one_mistake_one_problem(
    problems_of: ProblemsOf, body: str, path: str, phrase: str
) -> None:
    problems = problems_of(HEAD + body)
    assert [p.path for p in problems] == [path], problems
    assert phrase in problems[0].message


@pytest.mark.parametrize(
    ("text", "path", "phrase"),
    [pytest.param(text, path, phrase, id=case) for case, text, path, phrase in FULL],
)
def test_whole_document_mistakes(
    problems_of: ProblemsOf, text: str, path: str, phrase: str
) -> None:
    problems = problems_of(text)
    assert [p.path for p in problems] == [path], problems
    assert phrase in problems[0].message

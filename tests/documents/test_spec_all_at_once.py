"""A document with several independent mistakes reports every one of them, in one pass."""

from __future__ import annotations

from tests.documents.support import ProblemsOf

FIVE_MISTAKES = """\
name: shop
profiles:
  web-server: {type: server, flavor: m1.smal, image: cirros}      # 1: unknown flavor
  db-data: {type: volume, size: x}                               # 2: placeholder size
node_groups:
  - name: web
    profile: web-server
    count: 3
    countt: 4                                                    # 3: unknown field
  - name: db
    unit: {data: db-data}
    count: 1
    min: 2                                                       # 4: count below min
groupings:
  - {name: g, members: [web, api], rule: anti-affinity}          # 5: unknown member
"""


def test_five_mistakes_give_five_problems(problems_of: ProblemsOf) -> None:
    problems = problems_of(FIVE_MISTAKES)
    assert sorted(p.path for p in problems) == sorted(
        [
            "/profiles/web-server/flavor",
            "/profiles/db-data/size",
            "/node_groups/0/countt",
            "/node_groups/1/count",
            "/groupings/0/members/1",
        ]
    ), problems


def test_broken_elements_do_not_cascade(problems_of: ProblemsOf) -> None:
    """References to a broken profile, group or grouping add nothing of their own."""
    problems = problems_of(
        """\
name: shop
profiles:
  broken: {type: server, flavor: nope, image: cirros}
instances:
  - {name: lonely, profile: broken}
node_groups:
  - {name: web, profile: broken, count: many}
  - {name: db, profile: {type: volume, size: 1}, count: 1, depends_on: [web]}
groupings:
  - {name: g, members: [web, db], rule: anti-affinity}
  - {name: h, members: [web, lonely], rule: afinity}
"""
    )
    assert [p.path for p in problems] == [
        "/profiles/broken/flavor",
        "/node_groups/0/count",
        "/groupings/1/rule",
    ], problems


def test_problems_in_every_element_are_found(problems_of: ProblemsOf) -> None:
    groups = "".join(f"  - {{name: g{i}, profile: nope{i}, count: 1}}\n" for i in range(6))
    problems = problems_of("name: shop\nnode_groups:\n" + groups)
    assert [p.path for p in problems] == [f"/node_groups/{i}/profile" for i in range(6)]

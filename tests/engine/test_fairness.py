"""Repairs of many tenants taken in turn (issue 37): round robin over projects, each project's
own order kept."""

from __future__ import annotations

from shoal.engine.fairness import in_turn


def test_projects_take_turns_and_keep_their_own_order() -> None:
    found = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("c", 1), ("c", 2)]
    assert in_turn(found, lambda r: r[0]) == [
        ("a", 1),
        ("b", 1),
        ("c", 1),
        ("a", 2),
        ("c", 2),
        ("a", 3),
    ]
    assert in_turn([], lambda r: "x") == []

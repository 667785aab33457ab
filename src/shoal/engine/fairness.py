"""Repairs of many tenants taken in turn (issue 37): one tenant's thousand broken clusters must
not make another's one repair wait behind them all.

Engines claim cluster actions oldest first. A tick that submits many repairs at once gives
them creation times a microsecond apart in round-robin order over their projects (the first
repair of every project, then the second of every project ...), so claims take the projects
in turn; repairs of one project keep the order they were found in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

STEP_S = 1e-6
"""Between two repairs' creation times in one tick: orders them, moves nothing that matters."""


def in_turn(items: Iterable[T], project: Callable[[T], str]) -> list[T]:
    """`items` round-robin over their projects, in the order each project first appears."""
    queues: dict[str, list[T]] = {}
    for item in items:
        queues.setdefault(project(item), []).append(item)
    out: list[T] = []
    depth = max((len(q) for q in queues.values()), default=0)
    for i in range(depth):
        out.extend(q[i] for q in queues.values() if i < len(q))
    return out

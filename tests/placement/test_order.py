"""The greedy's work order: the bucketed order (linear, for large clusters) is the sorted one.

`work_units` groups units by rank instead of sorting every unit; the answer must be exactly
the order a sort by (rank, first item as listed) gives, since every placement depends on it.
"""

from __future__ import annotations

import pytest

from shoal.placement.greedy import constrainedness, work_units
from shoal.placement.problem import build_problem
from tests.placement.strategies import random_case


def _sorted_order(seed: int) -> tuple[list[list[int]], list[list[int]]]:
    case = random_case(seed)
    p = build_problem(case.spec, case.inventory, case.existing, case.used)
    rank = [constrainedness(p, it) for it in p.items]
    units = [list(b) for b in p.blocks if b] + [[it.index] for it in p.items if it.block < 0]
    keyed = sorted((min(rank[i] for i in u), u[0], u) for u in units)
    want = [sorted(u, key=lambda i: (rank[i], i)) for _, _, u in keyed]
    order, blocks = work_units(p)
    got = [[e] if e >= 0 else blocks[-1 - e] for e in order]
    return got, want


@pytest.mark.parametrize("chunk", range(4))
def test_bucketed_order_is_the_sorted_order(chunk: int) -> None:
    for seed in range(chunk * 100, chunk * 100 + 100):
        got, want = _sorted_order(seed)
        assert got == want, seed

"""The search state's seeded tie-break order: the fast shuffle is Python's own; the chunked
capacity index reads as the one sorted list it replaced."""

from __future__ import annotations

import random
from bisect import bisect_left, insort

import pytest

from shoal.placement.state import CHUNK, Chunked, shuffled


@pytest.mark.parametrize("n", [0, 1, 2, 7, 500, 5_000])
@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_shuffled_is_random_shuffle(n: int, seed: int) -> None:
    expected = list(range(n))
    random.Random(seed).shuffle(expected)
    assert shuffled(n, seed) == expected


@pytest.mark.parametrize("n", [1, 5, CHUNK, CHUNK + 1, 3 * CHUNK + 3])
def test_chunked_index_is_a_sorted_list(n: int) -> None:
    """Moves anywhere (chunks split, empty and vanish) keep it equal to a flat sorted list
    changed the old way, and its reads agree with that list's."""
    rng = random.Random(n)
    flat = sorted(rng.sample(range(100 * n), n))
    index = Chunked(list(flat))
    taken = set(flat)
    for _ in range(3_000):
        old = rng.choice(flat)
        # Mostly near the top, as placements move them; sometimes anywhere or above all.
        new = rng.choice((old - rng.randint(1, 50), rng.randint(0, 120 * n), flat[-1] + 1))
        if new in taken or new < 0:
            continue
        index.move(old, new)
        del flat[bisect_left(flat, old)]
        insort(flat, new)
        taken.discard(old)
        taken.add(new)
    assert [e for c in index.chunks for e in c] == flat
    assert all(index.chunks) and index.maxes == [c[-1] for c in index.chunks]
    assert len(index) == n
    low = flat[len(flat) // 3]
    assert list(index.descending(low)) == [e for e in reversed(flat) if e >= low]
    assert index.top(7) == flat[-7:]

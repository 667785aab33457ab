"""The search state's seeded tie-break order: the fast shuffle is Python's own."""

from __future__ import annotations

import random

import pytest

from shoal.placement.state import shuffled


@pytest.mark.parametrize("n", [0, 1, 2, 7, 500, 5_000])
@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_shuffled_is_random_shuffle(n: int, seed: int) -> None:
    expected = list(range(n))
    random.Random(seed).shuffle(expected)
    assert shuffled(n, seed) == expected

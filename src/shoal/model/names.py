"""Names in the order people read them: `web-2` before `web-10` (issue 36: node tables in id
order looked shuffled). A leaf of the model that imports nothing, so the CLI's tables use it
without loading the model's types."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key comparing runs of digits as numbers and the rest as text."""
    return tuple(
        (1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(name) if part
    )

"""How big an evaluated value is once written out, measured once per object as it is made.

Heat's functions hand values out by reference: `get_attr` of an `OS::Heat::Value`, `get_param`,
`get_file`, a `repeat` placeholder. A chain of 30 Values, each a list of the previous one
twice, is a few kilobytes of template and of memory, and 2**30 items once anything walks it (a
comparison, JSON, a server's metadata). So the evaluator charges every value it hands out by
its written-out size (`Sizes.of`) against the reading's budget, and refuses one nested deeper
than MAX_VALUE_DEPTH. A part shared many times is measured once (by object identity), so the
charge of a value built from shared parts costs what is new in it, never what it expands to:
the 30-Value chain is refused at its 17th Value after a few hundred steps.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_VALUE_DEPTH = 100
"""Levels a value handed out may nest (the parser's own bound on a document, syntax.py): one
Value wrapping another in a list, 1,000 times over, would break every walker of the result."""
SCALAR_CHARS = 8
"""What a number, boolean or null counts as text (its JSON is short; converting a 5,000-digit
integer to text to measure it is exactly the work to avoid)."""


@dataclass(frozen=True, slots=True)
class Size:
    """A value written out: its characters (keys and text), its items (each list item,
    mapping entry and scalar counts one), and how deep it nests (a scalar is 0)."""

    chars: int
    items: int
    depth: int


_SCALAR = Size(SCALAR_CHARS, 1, 0)


class Sizes:
    """Sizes of values, each list or mapping measured once for the whole reading."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[object, Size]] = {}
        """id -> (the object, kept alive so its id is not reused; its size)."""

    def of(self, value: object) -> Size:
        """`value`'s written-out size; walked without recursion, each container once."""
        if not isinstance(value, dict | list):
            return Size(len(value), 1, 0) if isinstance(value, str) else _SCALAR
        memo = self._memo
        found = memo.get(id(value))
        if found is not None:
            return found[1]
        busy: set[int] = set()
        stack: list[tuple[object, bool]] = [(value, False)]
        while stack:
            v, ready = stack.pop()
            if id(v) in memo:
                continue
            children = _children(v)
            if not ready:
                busy.add(id(v))
                stack.append((v, True))
                for c in children:
                    if isinstance(c, dict | list) and id(c) not in memo:
                        if id(c) in busy:  # a value holding itself: never written out
                            memo[id(c)] = (c, Size(1 << 62, 1 << 62, 1 << 30))
                        else:
                            stack.append((c, False))
                continue
            busy.discard(id(v))
            chars = items = depth = 0
            for c in children:
                s = memo[id(c)][1] if isinstance(c, dict | list) else self.of(c)
                chars += s.chars
                items += s.items
                depth = max(depth, s.depth)
            memo[id(v)] = (v, Size(chars, items + 1, depth + 1))
        return memo[id(value)][1]


def _children(value: object) -> list[object]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list):
        return value
    return []

"""The parsed document before any meaning is given to it, and how to name its values in messages.

JSON and YAML are both read into plain Python values, except that every mapping becomes a
`Pairs` list: the parsers keep repeated keys in order instead of silently keeping the last, so
the readers can accept them where a format repeats keys on purpose (the vcluster seed) and
report them everywhere else.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TypeGuard


class Pairs(list[tuple[object, object]]):
    """A mapping as read: every (key, value) pair in document order, repeats kept."""


def is_mapping(value: object) -> bool:
    return isinstance(value, Pairs | Mapping)


def pairs_of(value: object) -> list[tuple[object, object]]:
    """The (key, value) pairs of a mapping value (a `Pairs` or a plain dict)."""
    if isinstance(value, Pairs):
        return list(value)
    if isinstance(value, Mapping):
        return [(k, v) for k, v in value.items()]
    raise TypeError(f"not a mapping: {type(value).__name__}")


def is_list(value: object) -> TypeGuard[list[object] | tuple[object, ...]]:
    return isinstance(value, list | tuple) and not isinstance(value, Pairs)


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def quote(text: str, limit: int = 40) -> str:
    """`text` in double quotes, cut short when long."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def describe(value: object) -> str:
    """What a value is, for "found ..." in a message: 'the text "x"', '3.5', 'a list'."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = str(value) if abs(value) < 10**30 else "a very large number"
        return text
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"the text {quote(value)}" if value else "empty text"
    if is_mapping(value):
        return "a mapping"
    if is_list(value):
        return "a list"
    if isinstance(value, dt.datetime):
        return f"a timestamp ({value.isoformat()})"
    if isinstance(value, dt.date):
        return f"a date ({value.isoformat()})"
    if isinstance(value, bytes):
        return "binary data"
    return f"a value of type {type(value).__name__}"


def key_text(key: object) -> str:
    """A mapping key for a message: strings as they are, anything else described."""
    return key if isinstance(key, str) else describe(key)

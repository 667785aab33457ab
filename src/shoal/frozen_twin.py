"""Frozen dataclasses built without their frozen `__init__`, for values made once per node.

Issue 23: a frozen dataclass's `__init__` sets each field through `object.__setattr__`, about
5x a plain init, and a 100,000-node create builds several such values per node. A *twin* is a
plain class with the frozen class's very `__slots__`, set by an ordinary `__init__`; `become`
then gives the object the frozen class (CPython allows the change: the layout is the same),
and it is as frozen and as equal as one built normally. `check_twin` runs at import beside each
twin, so a twin whose slots drift from its class's fields fails at once, not in a test.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar, cast

T = TypeVar("T")

_set = object.__setattr__


def become(obj: object, cls: type[T]) -> T:
    """`obj`, a twin of `cls`, made a `cls`."""
    _set(obj, "__class__", cls)
    return cast(T, obj)


def check_twin(twin: type, frozen: Any) -> None:
    """Raise TypeError unless `twin` has `frozen`'s fields as its slots, in their order."""
    if getattr(twin, "__slots__", None) != tuple(f.name for f in fields(frozen)):
        raise TypeError(f"{twin.__name__} must have {frozen.__name__}'s fields in their order")

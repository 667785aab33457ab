"""Frozen dataclasses built without their frozen `__init__`, for values made once per node.

Why it exists: a frozen dataclass's `__init__` sets each field through `object.__setattr__`,
about 5x a plain init, and a 100,000-node create builds several such values per node. A *twin*
is a plain class with the frozen class's very `__slots__`, set by an ordinary `__init__`;
`become` then gives the object the frozen class (CPython allows the change: the layout is the
same), and it is as frozen and as equal as one built normally.

The benchmark that justifies it: `benchmarks/scale.py` (`create-pg`, `cpu_ms_per_node`), whose
claims, node runs, sim creates and flushes build these values per node; measured again for
issue 40 (`python -m timeit` over `store/records.action_record`, 19 fields, on this 2-core
machine): the frozen `__init__` 7.5 us a record, setting the slots through their descriptors
on `object.__new__` (the plainest code that keeps the class frozen) 5.7 us, the twin 1.4 us.
Plain code is not as fast, so the twins stay, each beside its class and checked at import.

`check_twin` runs at import beside each twin, so a twin that drifts from its class fails at
once, not in a test: the slots are the fields in their order; the twin's `__init__` takes the
first fields as parameters, in order, each annotated as its field is, with the field's default
where it gives one; and the fields after its parameters are set to their defaults (checked by
building one twin of placeholder values).
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, Field, fields
from typing import Any, TypeVar, cast

T = TypeVar("T")

_set = object.__setattr__


def become(obj: object, cls: type[T]) -> T:
    """`obj`, a twin of `cls`, made a `cls`."""
    _set(obj, "__class__", cls)
    return cast(T, obj)


def _type_text(annotation: object) -> str:
    """An annotation as comparable text (both sides are strings under `from __future__ import
    annotations`; a class is named)."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return "".join(str(text or annotation).split())


def _default(f: Field[Any]) -> object:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def check_twin(twin: type, frozen: Any) -> None:
    """Raise TypeError unless `twin` is a faithful twin of the frozen dataclass `frozen` (see
    the module's docstring for what is compared)."""
    own = fields(frozen)
    name = f"{twin.__name__} (twin of {frozen.__name__})"
    if getattr(twin, "__slots__", None) != tuple(f.name for f in own):
        raise TypeError(f"{name} must have {frozen.__name__}'s fields as slots, in their order")
    params = list(inspect.signature(twin).parameters.values())
    if [p.name for p in params] != [f.name for f in own[: len(params)]]:
        raise TypeError(f"{name}: __init__ must take the first fields, in their order")
    for p, f in zip(params, own, strict=False):
        if _type_text(p.annotation) != _type_text(f.type):
            raise TypeError(f"{name}: {p.name} is {p.annotation}, the field {f.type}")
        if p.default is not inspect.Parameter.empty and p.default != _default(f):
            raise TypeError(f"{name}: {p.name} defaults to {p.default!r}, the field otherwise")
    rest = own[len(params) :]
    if any(_default(f) is MISSING for f in rest):
        raise TypeError(f"{name}: a field without a default is not a parameter of __init__")
    placeholders = [object() for _ in params]
    built = twin(*placeholders)
    for p, value in zip(params, placeholders, strict=True):
        if getattr(built, p.name) is not value:
            raise TypeError(f"{name}: __init__ does not set {p.name} to its parameter")
    for f in rest:
        if getattr(built, f.name) != _default(f):
            raise TypeError(f"{name}: __init__ must set {f.name} to its default")

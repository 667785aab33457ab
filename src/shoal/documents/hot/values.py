"""Values a template can only name, not know: a resource's id, its attributes, a random string.

Evaluating a template without a cloud leaves these symbolic. They flow through functions
(a `str_replace` over an attribute is itself unknown) and through nested templates' parameters
(a server group's id passed down to a role template), where the reader still sees what they
point at: that is how a server's `scheduler_hints` finds its server group.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ref:
    """`get_resource`: the id of resource `name` in the template `scope`."""

    name: str
    scope: str


@dataclass(frozen=True, slots=True)
class Attr:
    """`get_attr`: an attribute of a resource, known only once it exists."""

    name: str
    scope: str
    path: tuple[object, ...]


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value computed at run time from symbolic inputs (or random, or from yaql)."""

    why: str


@dataclass(frozen=True, slots=True)
class _Omit:
    """`if` without its false branch (wallaby): the property is left out."""


OMIT = _Omit()

Symbolic = Ref | Attr | Unknown


def is_symbolic(value: object) -> bool:
    return isinstance(value, Ref | Attr | Unknown)


def first_symbolic(value: object) -> Symbolic | None:
    """The first symbolic value inside `value` (lists and mappings searched), or None."""
    if isinstance(value, Ref | Attr | Unknown):
        return value
    if isinstance(value, dict):
        for k, v in value.items():
            found = first_symbolic(k) or first_symbolic(v)
            if found is not None:
                return found
    if isinstance(value, list):
        for v in value:
            found = first_symbolic(v)
            if found is not None:
                return found
    return None


def unknown_from(value: Symbolic, what: str) -> Unknown:
    """The unknown result of `what` applied to a symbolic input."""
    if isinstance(value, Unknown):
        return value
    if isinstance(value, Ref):
        return Unknown(f"{what} of the id of resource {value.name}")
    return Unknown(f"{what} of an attribute of resource {value.name}")


def shown(value: object) -> object:
    """A JSON-able rendering of an evaluated value, symbolic parts in words."""
    if isinstance(value, Ref):
        return f"<id of {value.name}>"
    if isinstance(value, Attr):
        return f"<{'.'.join([value.name, *map(str, value.path)])}>"
    if isinstance(value, Unknown):
        return f"<{value.why}>"
    if isinstance(value, dict):
        return {str(k): shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value

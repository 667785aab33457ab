"""Condition functions: if, equals, not, and, or, contains.

A condition is a condition's name, a boolean, or one of these; `if` without its false value
(wallaby) leaves the property out. Comparisons need values known before the stack exists.
"""

from __future__ import annotations

from shoal.documents.collect import child
from shoal.documents.hot.evaluator import BROKEN, Evaluator, Handler
from shoal.documents.hot.values import OMIT, first_symbolic
from shoal.documents.tree import describe


def _if(e: Evaluator, args: object, path: str) -> object:
    hi = 3
    lo = 2 if e.scope.version.if_without_else else 3
    items = e.args_list("if", args, path, lo, hi)
    if items is None:
        return BROKEN
    chosen = e.decide(items[0], child(path, 0))
    if chosen is None:
        return BROKEN
    if chosen:
        return e.ev(items[1], child(path, 1))
    return e.ev(items[2], child(path, 2)) if len(items) == 3 else OMIT


def _equals(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("equals", args, path, 2, 2)
    if values is None:
        return BROKEN
    a, b = values
    sym = first_symbolic([a, b])
    if sym is not None:
        if sym == BROKEN:
            return BROKEN
        return e.fail(path, "'equals' must compare values known before the stack exists")
    return a == b


def _not(e: Evaluator, args: object, path: str) -> object:
    value = e.truth(args, path)
    return BROKEN if value is None else not value


def _and_or(name: str) -> Handler:
    def handler(e: Evaluator, args: object, path: str) -> object:
        items = e.args_list(name, args, path, 2, 99)
        if items is None:
            return BROKEN
        values = [e.truth(v, child(path, i)) for i, v in enumerate(items)]
        if any(v is None for v in values):
            return BROKEN
        return all(values) if name == "and" else any(values)

    return handler


def _contains(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("contains", args, path, 2, 2)
    if values is None:
        return BROKEN
    value, seq = values
    if first_symbolic([value, seq]) is not None:
        return (
            BROKEN
            if first_symbolic([value, seq]) == BROKEN
            else e.fail(path, "'contains' must test values known before the stack exists")
        )
    if not isinstance(seq, list | str):  # Heat: a Sequence; a mapping is refused
        return e.fail(child(path, 1), f"'contains' needs a sequence, found {describe(seq)}")
    return value in seq


FUNCTIONS: dict[str, Handler] = {
    "if": _if,
    "equals": _equals,
    "not": _not,
    "and": _and_or("and"),
    "or": _and_or("or"),
    "contains": _contains,
}

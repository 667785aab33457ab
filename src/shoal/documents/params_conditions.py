"""Conditions: named boolean expressions over parameters that switch parts of a document.

`conditions: {name: expr}` with `expr` one of: true/false; the name of another condition;
`{param: NAME}` (a boolean parameter); `{equals: [a, b]}` (values or `{param: NAME}`);
`{not: expr}`; `{and: [expr, ...]}`; `{or: [expr, ...]}` — Heat's condition functions without
the `get_param` spelling. A `condition:` key on an element takes a condition's name or an
expression. Expressions are capped in depth and conditions may not refer to themselves.
"""

from __future__ import annotations

from shoal.documents.collect import ProblemList, child
from shoal.documents.params import ParameterTable, to_json
from shoal.documents.tree import describe, is_list, is_mapping, pairs_of, quote
from shoal.model.software import Json

MAX_CONDITIONS = 500
MAX_DEPTH = 32

_OPS = ("equals", "not", "and", "or", "param")


class Conditions:
    """Declared conditions, evaluated on demand (each once) against the parameters."""

    def __init__(self, raw: object, path: str, params: ParameterTable, out: ProblemList) -> None:
        self.params = params
        self.out = out
        self.path = path
        self.raw: dict[str, object] = {}
        self.values: dict[str, bool | None] = {}
        self._evaluating: list[str] = []
        if raw is None:
            return
        if not is_mapping(raw):
            out.add(
                path,
                f"'conditions' must be a mapping of names to expressions, found {describe(raw)}",
            )
            return
        items = pairs_of(raw)
        if len(items) > MAX_CONDITIONS:
            out.add(path, f"at most {MAX_CONDITIONS} conditions, found {len(items)}")
            return
        for key, value in items:
            if isinstance(key, str):
                self.raw[key] = value

    def check_all(self) -> None:
        """Evaluate every declared condition, so a broken one is reported even when unused."""
        for name in self.raw:
            self.named(name, child(self.path, name))

    def named(self, name: str, where: str) -> bool | None:
        if name in self.values:
            return self.values[name]
        if name not in self.raw:
            known = ", ".join(sorted(self.raw)) or "none"
            self.out.add(where, f"no condition named {quote(name)} (declared: {known})")
            return None
        if name in self._evaluating:
            loop = [*self._evaluating[self._evaluating.index(name) :], name]
            self.out.add(child(self.path, name), f"condition cycle: {' → '.join(loop)}")
            self.values[name] = None
            return None
        self._evaluating.append(name)
        value = self.evaluate(self.raw[name], child(self.path, name), 0)
        self._evaluating.pop()
        self.values[name] = value
        return value

    def evaluate(self, expr: object, where: str, depth: int) -> bool | None:
        """True or False, or None with a problem."""
        if depth > MAX_DEPTH:
            self.out.add(where, f"the condition nests deeper than {MAX_DEPTH} levels")
            return None
        if isinstance(expr, bool):
            return expr
        if isinstance(expr, str):
            return self.named(expr, where)
        if not is_mapping(expr) or len(pairs_of(expr)) != 1:
            self.out.add(
                where,
                "a condition is true, false, a condition's name, or a mapping with one of "
                f"{', '.join(_OPS)}; found {describe(expr)}",
            )
            return None
        ((op, arg),) = pairs_of(expr)
        at = child(where, str(op))
        match op:
            case "param":
                value = self.value(expr, where)
                if value is None or isinstance(value, bool):
                    return value
                self.out.add(at, f"a condition needs a boolean parameter, found {describe(value)}")
                return None
            case "not":
                inner = self.evaluate(arg, at, depth + 1)
                return None if inner is None else not inner
            case "and" | "or":
                if not is_list(arg) or not arg:
                    self.out.add(at, f"'{op}' takes a non-empty list of conditions")
                    return None
                values = [self.evaluate(a, child(at, i), depth + 1) for i, a in enumerate(arg)]
                if any(v is None for v in values):
                    return None
                return all(values) if op == "and" else any(values)
            case "equals":
                if not is_list(arg) or len(arg) != 2:
                    self.out.add(at, "'equals' takes a list of two values")
                    return None
                a = self.value(arg[0], child(at, 0))
                b = self.value(arg[1], child(at, 1))
                return a == b
        self.out.add(at, f"unknown condition function '{op}'; use one of {', '.join(_OPS)}")
        return None

    def value(self, expr: object, where: str) -> Json:
        """A value in a condition: a literal, or `{param: NAME}`'s value."""
        if is_mapping(expr):
            items = pairs_of(expr)
            if len(items) == 1 and items[0][0] == "param":
                name = items[0][1]
                p = self.params.get(name) if isinstance(name, str) else None
                if p is None:
                    self.out.add(child(where, "param"), f"no parameter named {describe(name)}")
                    return None
                return p.value
        return to_json(expr)

    def switch(self, raw: object, where: str) -> bool:
        """The value of an element's `condition:` key (True when the key is absent)."""
        if raw is None:
            return True
        result = self.evaluate(raw, where, 0)
        return result is not False

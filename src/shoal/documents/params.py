"""Typed parameters of a native document: declarations, values from environments, constraints.

A document declares `parameters: {name: {type, default, constraints, hidden, description}}`;
environments give values (`parameters`) and defaults (`parameter_defaults`). Every parameter
ends with one checked value (or none, reported only where it is used), so the rest of the
document can be read as if the values had been written in place. Hidden parameters become
secrets when they feed a deployment's input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from shoal.documents import patterns
from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name
from shoal.documents.tree import describe, is_list, is_mapping, pairs_of, quote
from shoal.model.software import GENERATED_MARK, Json

MAX_PARAMETERS = 500
MAX_VALUE_DEPTH = 32
"""How deeply a parameter's value (or any literal value) may nest lists and mappings."""


class ParamType(StrEnum):
    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    JSON = "json"
    LIST = "comma_delimited_list"


@dataclass(frozen=True, slots=True)
class Constraints:
    allowed_values: tuple[Json, ...] | None = None
    range_min: float | None = None
    range_max: float | None = None
    length_min: int | None = None
    length_max: int | None = None
    allowed_pattern: str | None = None


@dataclass(slots=True)
class Parameter:
    name: str
    type: ParamType
    path: str
    default: Json = None
    hidden: bool = False
    description: str = ""
    constraints: Constraints = field(default_factory=Constraints)
    value: Json = None
    has_value: bool = False
    broken: bool = False
    """Its value was refused (and reported): uses of it say nothing more."""


@dataclass(slots=True)
class ParameterTable:
    """Every declared parameter with its final value."""

    params: dict[str, Parameter] = field(default_factory=dict)

    def get(self, name: str) -> Parameter | None:
        return self.params.get(name)

    def secrets(self) -> dict[str, str]:
        """Values of hidden parameters, as text (what a deployment's secret input carries)."""
        return {
            p.name: p.value if isinstance(p.value, str) else _text(p.value)
            for p in self.params.values()
            if p.hidden and p.has_value
        }

    def generated(self) -> dict[str, str]:
        """Hidden parameters holding a secret Shoal drew (their description marks them)."""
        return {
            p.name: p.description
            for p in self.params.values()
            if p.hidden and p.description.startswith(GENERATED_MARK + " ")
        }


def to_json(value: object, depth: int = 0) -> Json:
    """A parsed value as plain JSON (mappings as dicts); deeper than the cap is cut to None."""
    if depth > MAX_VALUE_DEPTH:
        return None
    if is_mapping(value):
        return {str(k): to_json(v, depth + 1) for k, v in pairs_of(value)}
    if is_list(value):
        return [to_json(v, depth + 1) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def too_deep(value: object, depth: int = 0) -> bool:
    if depth > MAX_VALUE_DEPTH:
        return True
    if is_mapping(value):
        return any(too_deep(v, depth + 1) for _, v in pairs_of(value))
    if is_list(value):
        return any(too_deep(v, depth + 1) for v in value)
    return False


def _text(value: Json) -> str:
    return json.dumps(value, sort_keys=True)


class _Disabled:
    """An element switched off by its condition, left in its list so pointers stay true."""

    def __repr__(self) -> str:
        return "DISABLED"


DISABLED = _Disabled()


def read_parameters(raw: object, path: str, out: ProblemList) -> ParameterTable:
    table = ParameterTable()
    if raw is None:
        return table
    decl = mapping(raw, path, out, "'parameters'")
    if decl is None:
        return table
    entries = decl.entries()
    if len(entries) > MAX_PARAMETERS:
        out.add(path, f"at most {MAX_PARAMETERS} parameters, found {len(entries)}")
        return table
    for name, body in entries:
        where = child(path, name)
        if not is_name(name):
            out.add(where, f"{quote(name)} is not a valid parameter name: {NAME_RULE}")
            continue
        p = _parameter(name, body, where, out)
        if p is not None:
            table.params[name] = p
    return table


def _parameter(name: str, body: object, path: str, out: ProblemList) -> Parameter | None:
    f = mapping(body, path, out, "a parameter")
    if f is None:
        return None
    kind = f.choice("type", ParamType, required="give the parameter a type")
    hidden = f.flag("hidden", default=False)
    description = f.text("description") or ""
    constraints = _constraints(f, kind)
    raw_default = f.raw("default")
    f.finish()
    if kind is None:
        return None
    p = Parameter(name, kind, path, hidden=bool(hidden), description=description)
    if constraints is not None:
        p.constraints = constraints
    if f.has("default"):
        value = coerce(raw_default, kind, f.at("default"), out)
        if value is not None:
            p.default = value
            p.value, p.has_value = value, True
        else:
            p.broken = True
    return p


def _constraints(f: Fields, kind: ParamType | None) -> Constraints | None:
    raw = f.raw("constraints")
    if raw is None:
        return Constraints()
    c = mapping(raw, f.at("constraints"), f.out, "'constraints'")
    if c is None:
        return None
    allowed: tuple[Json, ...] | None = None
    values = c.raw("allowed_values")
    if values is not None:
        if is_list(values) and values:
            allowed = tuple(to_json(v) for v in values)
        else:
            c.problem("allowed_values", f"expected a non-empty list, found {describe(values)}")
    rmin, rmax = _range_bounds(c)
    lmin, lmax = _length_bounds(c)
    pattern = c.text("allowed_pattern", empty_ok=False)
    if pattern is not None:
        why = patterns.problem(pattern)
        if why is not None:
            c.problem("allowed_pattern", why)
            pattern = None
    c.finish()
    if kind is not None and (rmin is not None or rmax is not None) and kind != ParamType.NUMBER:
        c.problem("range", f"a range applies to number parameters, not to {kind}")
    if kind is not None and pattern is not None and kind != ParamType.STRING:
        c.problem("allowed_pattern", f"a pattern applies to string parameters, not to {kind}")
    return Constraints(allowed, rmin, rmax, lmin, lmax, pattern)


def _length_bounds(c: Fields) -> tuple[int | None, int | None]:
    raw = c.raw("length")
    if raw is None:
        return None, None
    b = mapping(raw, c.at("length"), c.out, "'length'")
    if b is None:
        return None, None
    low, high = b.integer("min", minimum=0), b.integer("max", minimum=0)
    b.finish()
    return low, high


def _range_bounds(c: Fields) -> tuple[float | None, float | None]:
    raw = c.raw("range")
    if raw is None:
        return None, None
    b = mapping(raw, c.at("range"), c.out, "'range'")
    if b is None:
        return None, None
    low, high = b.number("min", minimum=-1e300), b.number("max", minimum=-1e300)
    b.finish()
    return low, high


def coerce(value: object, kind: ParamType, path: str, out: ProblemList) -> Json:
    """A value as the parameter's type, or None with a problem."""
    if too_deep(value):
        out.add(path, f"the value nests deeper than {MAX_VALUE_DEPTH} levels")
        return None
    match kind:
        case ParamType.STRING:
            if isinstance(value, str):
                return value
            if isinstance(value, int | float) and not isinstance(value, bool):
                return str(value)
        case ParamType.NUMBER:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return value
            if isinstance(value, str):
                try:
                    return int(value) if re.fullmatch(r"[+-]?\d+", value) else float(value)
                except ValueError:
                    pass
        case ParamType.BOOLEAN:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no"):
                return value.lower() in ("true", "yes")
        case ParamType.JSON:
            if is_mapping(value) or is_list(value):
                return to_json(value)
        case ParamType.LIST:
            if isinstance(value, str):
                return [v.strip() for v in value.split(",")] if value else []
            if is_list(value) and all(isinstance(v, str | int | float) for v in value):
                return [str(v) for v in value]
    out.add(path, f"expected a {kind} value, found {describe(value)}")
    return None


def check_constraints(p: Parameter, value: Json, path: str, out: ProblemList) -> bool:
    c = p.constraints
    found = describe(value)
    if c.allowed_values is not None and value not in c.allowed_values:
        allowed = ", ".join(describe(v) for v in c.allowed_values)
        out.add(path, f"parameter '{p.name}' must be one of {allowed}, found {found}")
        return False
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and not _in_range(c, value):
        out.add(path, f"parameter '{p.name}' must be {_range(c)}, found {found}")
        return False
    if isinstance(value, str | list | dict):
        n = len(value)
        if (c.length_min is not None and n < c.length_min) or (
            c.length_max is not None and n > c.length_max
        ):
            out.add(path, f"parameter '{p.name}' must have a length {_length(c)}, found {n}")
            return False
    pattern = c.allowed_pattern
    if pattern is not None and isinstance(value, str) and not patterns.fullmatch(pattern, value):
        shown = "the hidden value" if p.hidden else found
        out.add(path, f"parameter '{p.name}' must match the pattern {pattern}, found {shown}")
        return False
    return True


def _in_range(c: Constraints, value: object) -> bool:
    assert isinstance(value, int | float)
    low_ok = c.range_min is None or value >= c.range_min
    return low_ok and (c.range_max is None or value <= c.range_max)


def _range(c: Constraints) -> str:
    parts = []
    if c.range_min is not None:
        parts.append(f"at least {c.range_min:g}")
    if c.range_max is not None:
        parts.append(f"at most {c.range_max:g}")
    return " and ".join(parts)


def _length(c: Constraints) -> str:
    parts = []
    if c.length_min is not None:
        parts.append(f"of at least {c.length_min}")
    if c.length_max is not None:
        parts.append(f"of at most {c.length_max}")
    return " and ".join(parts)


def apply_values(
    table: ParameterTable,
    values: Mapping[str, tuple[object, str]],
    defaults: Mapping[str, tuple[object, str]],
    out: ProblemList,
) -> None:
    """Set values from environments (`values` win over `defaults`), then check constraints.

    An undeclared name in `values` is a mistake; in `defaults` it is ignored, as Heat does
    (one environment can serve several documents).
    """
    for name, (raw, where) in defaults.items():
        p = table.get(name)
        if p is not None and name not in values:
            value = coerce(raw, p.type, where, out)
            if value is not None:
                p.value, p.has_value = value, True
            else:
                p.has_value, p.broken = False, True
    for name, (raw, where) in values.items():
        p = table.get(name)
        if p is None:
            known = ", ".join(sorted(table.params)) or "none"
            out.add(where, f"the document declares no parameter '{name}' (declared: {known})")
            continue
        value = coerce(raw, p.type, where, out)
        if value is not None:
            p.value, p.has_value = value, True
        else:
            p.has_value, p.broken = False, True
    for p in table.params.values():
        if p.has_value:
            source = values.get(p.name) or defaults.get(p.name)
            where = source[1] if source is not None else child(p.path, "default")
            if not check_constraints(p, p.value, where, out):
                p.has_value, p.broken = False, True

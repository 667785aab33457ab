"""A template's `parameters`: declared types, defaults, constraints, and the values given.

Values come from the environments (`parameters` first, then `parameter_defaults`, then the
declared default), are converted to the declared type the way Heat does (a number given as
text is a number; a comma_delimited_list given as text is split), and are checked against
every constraint. A `custom_constraint` needs a cloud to check (is this a Glance image?) and is
ignored with a notice. `allowed_pattern` runs on RE2 (`documents/patterns.py`); a pattern only a
backtracking engine can run (lookahead, as in real password rules) is left unchecked with a
notice. Hidden parameters are never quoted in a message.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

from shoal.documents import patterns
from shoal.documents.collect import child
from shoal.documents.hot.report import Report
from shoal.documents.hot.values import is_symbolic
from shoal.documents.tree import describe

TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")
_TYPE_ALIASES = {
    "String": "string",
    "Number": "number",
    "CommaDelimitedList": "comma_delimited_list",
    "Json": "json",
    "Boolean": "boolean",
}
_KEYS = {"type", "label", "description", "default", "hidden", "constraints", "immutable", "tags"}
_CONSTRAINTS = {
    "range",
    "length",
    "modulo",
    "allowed_values",
    "allowed_pattern",
    "custom_constraint",
}
_TRUE = {"true", "t", "yes", "y", "on", "1"}
_FALSE = {"false", "f", "no", "n", "off", "0"}
MISSING = object()


@dataclass(slots=True)
class Parameter:
    name: str
    type: str
    path: str
    default: object = MISSING
    hidden: bool = False
    constraints: list[tuple[str, object, str]] = field(default_factory=list)
    """(kind, argument, pointer) of each constraint Shoal checks."""


def read_parameters(
    section: object, path: str, report: Report, *, modulo: bool = True
) -> dict[str, Parameter]:
    """The declared parameters; each broken declaration is a problem and is left out.

    `modulo`: the template's version has the `modulo` constraint (2017-02-24 and later).
    """
    if section is None:
        return {}
    if not isinstance(section, dict):
        report.problem(path, f"'parameters' must be a mapping, found {describe(section)}")
        return {}
    out: dict[str, Parameter] = {}
    for name, body in section.items():
        where = child(path, str(name))
        if not isinstance(body, dict):
            report.problem(
                where, f"a parameter must be a mapping with a 'type', found {describe(body)}"
            )
            continue
        for key in body:
            if key not in _KEYS:
                report.problem(child(where, str(key)), f"unknown parameter key '{key}'")
        kind = body.get("type")
        kind = _TYPE_ALIASES.get(kind, kind) if isinstance(kind, str) else kind
        if kind not in TYPES:
            report.problem(
                child(where, "type"),
                f"parameter type must be one of {', '.join(TYPES)}, found {describe(kind)}",
            )
            continue
        param = Parameter(str(name), str(kind), where, hidden=body.get("hidden") is True)
        _constraints(param, body.get("constraints"), child(where, "constraints"), report, modulo)
        if "default" in body and body["default"] is not None:
            default = convert(param, body["default"], child(where, "default"), report)
            if default is not MISSING and check(param, default, child(where, "default"), report):
                param.default = default
        # a null default is no default, as in Heat (has_default: `default is not None`)
        out[str(name)] = param
    return out


_APPLIES = {
    "range": ("number",),
    "modulo": ("number",),
    "length": ("string", "comma_delimited_list", "json"),
}
"""The parameter types each constraint is valid for (Heat's `valid_types`)."""


def _constraints(
    param: Parameter, raw: object, path: str, report: Report, modulo: bool = True
) -> None:
    if raw is None:
        return
    if not isinstance(raw, list):
        report.problem(path, f"constraints must be a list, found {describe(raw)}")
        return
    for i, item in enumerate(raw):
        where = child(path, i)
        kinds = [k for k in item if k in _CONSTRAINTS] if isinstance(item, dict) else []
        if len(kinds) != 1:
            report.problem(
                where,
                "a constraint is one of "
                + ", ".join(sorted(_CONSTRAINTS))
                + " (with a description)",
            )
            continue
        kind = kinds[0]
        arg = item[kind]
        if kind == "modulo" and not modulo:
            report.problem(
                child(where, kind), "the 'modulo' constraint needs heat_template_version 2017-02-24"
            )
            continue
        if kind in _APPLIES and param.type not in _APPLIES[kind]:
            report.problem(
                child(where, kind), f"a '{kind}' constraint does not apply to a {param.type}"
            )
            continue
        if kind == "custom_constraint":
            report.notice(where, f"custom constraint '{arg}' is not checked (it needs a cloud)")
            continue
        if kind in ("range", "length", "modulo"):
            ok = (
                isinstance(arg, dict)
                and set(arg) <= {"min", "max", "step", "offset"}
                and all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in arg.values()
                )
            )
            if not ok:
                report.problem(
                    child(where, kind), f"'{kind}' takes numbers, e.g. {{min: 1, max: 5}}"
                )
                continue
        if kind == "allowed_values" and not isinstance(arg, list):
            report.problem(child(where, kind), "'allowed_values' must be a list")
            continue
        if kind == "allowed_pattern":
            why = patterns.problem(str(arg))
            if why is not None and patterns.only_backtracking(str(arg)):
                report.notice(
                    child(where, kind),
                    "this pattern needs lookaround or backreferences, which Shoal does not run "
                    "(patterns are matched by RE2, in linear time): it is not checked",
                )
                continue
            if why is not None:
                report.problem(child(where, kind), why)
                continue
        param.constraints.append((kind, arg, where))


def _say(param: Parameter, value: object) -> str:
    return "the value" if param.hidden else describe(value)


def convert(param: Parameter, value: object, path: str, report: Report) -> object:
    """`value` as the parameter's type, or MISSING with a problem."""
    if is_symbolic(value):
        return value
    kind = param.type
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, int | float | bool):
            return str(value)  # Heat's str(): a boolean is True or False
        if isinstance(value, dt.date):
            # Heat's YAML loader reads a timestamp as the text it is.
            return value.isoformat()
    elif kind == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                try:
                    return float(value)
                except ValueError:
                    pass
    elif kind == "comma_delimited_list":
        if isinstance(value, list):
            return [str(v) if isinstance(v, int | float) else v for v in value]
        if isinstance(value, str):
            return value.split(",") if value else []  # spaces kept, as Heat's split(',')
    elif kind == "json":
        # Heat's JsonParam: text is parsed (empty text stays empty text), any other JSON
        # value is taken as it is
        if not isinstance(value, str):
            return value
        if not value:
            return value
        try:
            return json.loads(value)
        except ValueError as bad:
            report.problem(path, f"parameter '{param.name}' must be valid JSON: {bad}")
            return MISSING
    elif kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str | int) and str(value).lower() in _TRUE | _FALSE:
            return str(value).lower() in _TRUE
    report.problem(path, f"parameter '{param.name}' is a {kind}; {_say(param, value)} is not")
    return MISSING


def check(param: Parameter, value: object, path: str, report: Report) -> bool:
    """True when `value` meets every constraint; each one it misses is a problem."""
    ok = True
    if is_symbolic(value):
        return True
    for kind, arg, where in param.constraints:
        message = _violation(kind, arg, value)
        if message is not None and param.hidden:  # a hidden value is never quoted
            message = f"the value does not meet its {kind} constraint"
        if message is not None:
            report.problem(path, f"parameter '{param.name}': {message} (constraint at {where})")
            ok = False
    return ok


def _violation(kind: str, arg: object, value: object) -> str | None:
    if kind == "allowed_values" and isinstance(arg, list):
        items = value if isinstance(value, list) else [value]
        bad = [v for v in items if v not in arg and str(v) not in map(str, arg)]
        if bad:
            return f"{describe(bad[0])} is not one of the allowed values"
    if (
        kind == "allowed_pattern"
        and isinstance(value, str)
        and not patterns.match_to_end(str(arg), value)
    ):
        return f"the value does not match the pattern {arg}"
    if kind in ("range", "length") and isinstance(arg, dict):
        measure: float | None = None
        if kind == "range" and isinstance(value, int | float):
            measure = value
        elif kind == "length" and isinstance(value, str | list | dict):
            measure = len(value)
        if measure is None:
            return None
        lo, hi = arg.get("min"), arg.get("max")
        if isinstance(lo, int | float) and measure < lo:
            return f"{kind} {measure} is below the minimum {lo}"
        if isinstance(hi, int | float) and measure > hi:
            return f"{kind} {measure} is above the maximum {hi}"
    if kind == "modulo" and isinstance(arg, dict) and isinstance(value, int | float):
        step, offset = arg.get("step"), arg.get("offset", 0)
        if (
            isinstance(step, int | float)
            and isinstance(offset, int | float)
            and step
            and (value - offset) % step
        ):
            return f"the value is not {offset} plus a multiple of {step}"
    return None

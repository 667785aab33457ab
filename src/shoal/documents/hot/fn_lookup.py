"""Functions that look things up: parameters, resources, attributes, files, `Fn::Select`.

`get_param` follows a path into a value and, as in Heat, gives empty text when the path leads
nowhere; `get_resource` and `get_attr` stay symbolic except `OS::Heat::Value`'s value.
"""

from __future__ import annotations

import json

from shoal.documents.collect import child
from shoal.documents.hot.evaluator import BROKEN, Evaluator, Handler
from shoal.documents.hot.values import Attr, Ref, Unknown
from shoal.documents.tree import describe


def _get_param(e: Evaluator, args: object, path: str) -> object:
    keys = args if isinstance(args, list) else [args]
    if not keys or not isinstance(keys[0], str | dict):
        return e.fail(path, f"'get_param' takes a parameter name, found {describe(args)}")
    name = e.ev(keys[0], child(path, 0)) if isinstance(keys[0], dict) else keys[0]
    if not isinstance(name, str):
        return BROKEN if name == BROKEN else e.fail(path, "the parameter name must be text")
    value = e.scope.param(name, path)
    for i, raw in enumerate(keys[1:], start=1):
        key = e.ev(raw, child(path, i))
        if value == BROKEN or isinstance(value, Ref | Attr | Unknown):
            return value
        digits = key.removeprefix("-") if isinstance(key, str) else ""
        if digits.isdigit() and not is_index_text(digits):
            # Heat would give "" (int() of it fails or leads nowhere); such an index is
            # refused instead (docs/hot.md, deliberate differences)
            return e.fail(child(path, i), f"an index has at most {MAX_INDEX_DIGITS} digits")
        found = path_step(value, key)
        if found is NOWHERE:
            return ""  # Heat: a path that leads nowhere gives empty text
        value = found
    return e.hand_out(value, path, "get_param")


def path_step(value: object, key: object) -> object:
    """One step of a `get_param` path as Heat's GetParam takes it: into a mapping, a list or
    a text (a text is a sequence of characters), by a key or an index that may be written
    as text (`"-1"` too); NOWHERE where Heat's step raises (and gives "")."""
    if not isinstance(value, dict | list | str) or not isinstance(key, str | int):
        return NOWHERE
    if isinstance(value, list | str) and isinstance(key, str):
        try:
            key = int(key)
        except ValueError:
            return NOWHERE
    if isinstance(value, dict):
        return value.get(key, NOWHERE)
    if not isinstance(key, int):
        return NOWHERE
    try:
        return value[key]
    except IndexError:
        return NOWHERE


NOWHERE = object()
MAX_INDEX_DIGITS = 9
"""An index written as text is at most this long (a 5,000-digit one is not converted)."""


def is_index_text(key: str) -> bool:
    """True for ASCII digits short enough to be a list index worth converting."""
    return key.isascii() and key.isdigit() and len(key) <= MAX_INDEX_DIGITS


def step_into(value: object, key: object) -> object:
    """`value[key]` for a mapping or a list, or NOWHERE."""
    if isinstance(value, dict):
        return value.get(key, NOWHERE)
    if isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
        return value[key]  # a negative index counts from the end, as Heat's Python indexing
    return NOWHERE


def select(e: Evaluator, value: object, key: object, path: str) -> object:
    """CloudFormation's Fn::Select as Heat runs it: text is read as JSON; a key missing from
    a mapping, an index past a list's end and a null give empty text."""
    if value == BROKEN or isinstance(value, Ref | Attr | Unknown):
        return value
    if value == "" or value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as bad:
            return e.fail(path, f"'Fn::Select': the text is not JSON: {bad}")
    if isinstance(value, dict):
        if not isinstance(key, str):
            return e.fail(path, f"the key of a mapping is text, found {describe(key)}")
        return value.get(key, "")
    if isinstance(key, str) and is_index_text(key.strip().removeprefix("-")):
        key = int(key)
    if isinstance(value, list):
        if not isinstance(key, int):
            long = isinstance(key, str) and len(key) > 20
            shown = f"a text of {len(str(key))} characters" if long else describe(key)
            return e.fail(path, f"{shown} is not an index of a list of {len(value)}")
        return value[key] if -len(value) <= key < len(value) else ""
    return e.fail(path, f"cannot select {describe(key)} from {describe(value)}")


def _get_resource(e: Evaluator, args: object, path: str) -> object:
    if not isinstance(args, str):
        return e.fail(path, f"'get_resource' takes a resource name, found {describe(args)}")
    if not e.scope.has_resource(args):
        return e.fail(path, f"unknown resource '{args}'")
    return Ref(args, e.scope.name)


def _get_attr(e: Evaluator, args: object, path: str) -> object:
    lo = 1 if e.scope.version.at_least("2015-10-15") else 2
    items = e.args_list("get_attr", args, path, lo, 99)
    if items is None:
        return BROKEN
    name = items[0]
    if not isinstance(name, str):
        return e.fail(child(path, 0), f"the resource name must be text, found {describe(name)}")
    if not e.scope.has_resource(name):
        return e.fail(child(path, 0), f"unknown resource '{name}'")
    rest = tuple(e.ev(v, child(path, i + 1)) for i, v in enumerate(items[1:]))
    known = ATTRIBUTES.get(e.scope.type_of(name) or "")
    if known is not None and rest and isinstance(rest[0], str) and rest[0] not in known:
        # Heat checks the attribute against the type's schema
        return e.fail(
            child(path, 1),
            f"the referenced attribute ({name} {rest[0]}) is incorrect; "
            f"{e.scope.type_of(name)} has {', '.join(sorted(known))}",
        )
    value = e.scope.attribute(name, rest)
    return value if isinstance(value, Attr) else e.hand_out(value, path, "get_attr")


ATTRIBUTES: dict[str, frozenset[str]] = {
    "OS::Heat::Value": frozenset({"value", "show"}),
    "OS::Heat::RandomString": frozenset({"value", "show"}),
    "OS::Heat::TestResource": frozenset({"output", "show"}),
}
"""The attributes of the types whose attributes are fixed (Heat 27's schemas); `get_attr` of
another is refused, as Heat refuses it. Other types' attributes are not checked yet."""


def _fn_select(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("Fn::Select", args, path, 2, 2)
    if values is None:
        return BROKEN
    key, value = values
    return select(e, value, key, path)


def _get_file(e: Evaluator, args: object, path: str) -> object:
    if not isinstance(args, str):
        return e.fail(path, f"'get_file' takes a file name, found {describe(args)}")
    text = e.scope.file(args)
    if text is None:
        return e.fail(path, f"the file '{args}' was not given (add it to 'files')")
    return e.hand_out(text, path, "get_file")


def _fn_unsupported(e: Evaluator, args: object, path: str) -> object:
    name = path.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    e.report.cannot(f"function {name}", path, f"Shoal does not read function '{name}' yet")
    return BROKEN


FUNCTIONS: dict[str, Handler] = {
    "get_param": _get_param,
    "get_resource": _get_resource,
    "get_attr": _get_attr,
    "get_file": _get_file,
    "Fn::Select": _fn_select,
    "Fn::Split": _fn_unsupported,
    "Fn::Replace": _fn_unsupported,
    "Fn::Base64": _fn_unsupported,
    "Ref": _fn_unsupported,
}

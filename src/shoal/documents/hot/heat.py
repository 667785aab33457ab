"""Heat's own resources that make no node: OS::Heat::None, Value, RandomString, TestResource.

`None` is what environments map a role to when it should not exist (a single-node
environment's server group, for instance); `Value` passes a value along, and its `value`
attribute is known before anything exists, so `get_attr` on it evaluates; a `RandomString`
stays unknown while the template is read, but its properties are checked as Heat checks them
and recorded, so a deployment input of it becomes a secret generated once per cluster
(`randomness.py`, `deployments.py`). `OS::Heat::TestResource` is what Heat's own tests (and
heat-tempest-plugin's API suite) build stacks of: it stores its `value`, and its `output`
attribute gives it back, known before anything exists, so `get_attr` evaluates as a Value's does.
Its knobs (`fail`, `wait_secs`, `action_wait_secs`, `update_replace`) are checked here and read
by the orchestration façade (`service/heat/`), which reports the resource's status from them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import MutableMapping
from typing import Any

from shoal.documents.collect import child
from shoal.documents.hot.context import Resource, StackView, check_props
from shoal.documents.hot.randomness import CHARACTER_CLASSES
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import RandomShape
from shoal.documents.hot.values import first_symbolic
from shoal.documents.params import to_json
from shoal.documents.tree import describe

VALUE_PROPS = frozenset({"value", "type"})
RANDOM_PROPS = frozenset({"length", "sequence", "character_classes", "character_sequences", "salt"})
MAX_ENTRIES = 64
"""Character classes or sequences one RandomString may list."""
TEST_PROPS = frozenset(
    {
        "value",
        "update_replace",
        "update_replace_value",
        "fail",
        "client_name",
        "entity_name",
        "wait_secs",
        "action_wait_secs",
        "attr_wait_secs",
        "constraint_prop_secs",
    }
)
"""Heat 27's OS::Heat::TestResource properties."""
TEST_WAITS = frozenset({"create", "update", "delete"})
MAX_TEST_WAIT_S = 3600
"""A TestResource waits at most an hour (Heat's -1, forever, is refused: Shoal bounds it)."""
_VALUE_TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")


def none(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    """Accepts any properties, as Heat's does."""


def value(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, VALUE_PROPS)
    if "value" not in props:  # Heat: required, but null is a value
        report.problem(child(res.path, "properties"), f"{res.written} needs the property 'value'")
    kind = props.get("type")
    if kind is not None and kind not in _VALUE_TYPES:
        report.problem(
            child(res.path, "properties", "type"), f"type is one of {', '.join(_VALUE_TYPES)}"
        )
        return
    converted, why = typed(props)
    if why is not None:
        report.problem(child(res.path, "properties", "value"), why)
    elif "value" in props:
        props["value"] = converted  # what `get_attr: [R, value]` gives, as in Heat


def test_resource(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    """Checks a TestResource's properties against Heat's schema; its `value` (default
    `test_string`) becomes what `get_attr: [R, output]` gives."""
    report = stack.ctx.report
    where = child(res.path, "properties")
    check_props(res, props, report, TEST_PROPS)
    for key in ("value", "client_name", "entity_name", "update_replace_value"):
        given = props.get(key)
        if isinstance(given, int | float) and not isinstance(given, bool):
            props[key] = str(given)  # Heat's string schema takes a number as its text
        elif given is not None and not isinstance(given, str) and first_symbolic(given) is None:
            report.problem(child(where, key), f"Value must be a string; got {describe(given)}")
    for key in ("fail", "update_replace"):
        given = props.get(key)
        if isinstance(given, str) and given.lower() in ("true", "false"):
            props[key] = given.lower() == "true"
        elif given is not None and not isinstance(given, bool) and first_symbolic(given) is None:
            report.problem(child(where, key), f"{describe(given)} is not a valid boolean")
    for key in ("wait_secs", "attr_wait_secs", "constraint_prop_secs"):
        _wait(props, key, child(where, key), report)
    waits = props.get("action_wait_secs")
    if isinstance(waits, dict):
        for key in list(waits):
            if key not in TEST_WAITS:
                report.problem(child(where, "action_wait_secs", str(key)), f"unknown key '{key}'")
            else:
                _wait(waits, key, child(where, "action_wait_secs", str(key)), report)
    elif waits is not None and first_symbolic(waits) is None:
        report.problem(child(where, "action_wait_secs"), f"{describe(waits)} is not a map")
    props.setdefault("value", "test_string")


def _wait(props: MutableMapping[Any, object], key: str, path: str, report: Report) -> None:
    given = props.get(key)
    if given is None or first_symbolic(given) is not None:
        return
    if isinstance(given, str):
        with contextlib.suppress(ValueError):
            given = float(given)
    if not isinstance(given, int | float) or isinstance(given, bool):
        report.problem(path, f"{describe(given)} is not a number")
    elif not 0 <= given <= MAX_TEST_WAIT_S:
        report.problem(path, f"a wait is from 0 to {MAX_TEST_WAIT_S} seconds in Shoal")
    else:
        props[key] = given


def typed(props: dict[str, object]) -> tuple[object, str | None]:
    """A Value's `value` converted to its `type` as Heat's property schema converts it (a
    number from text, text from a number or boolean; null is the type's empty value), or why
    it cannot be. Values known only at run time are left as they are."""
    given, kind = props.get("value"), props.get("type")
    if kind is None or first_symbolic(given) is not None:
        return given, None
    if kind == "string":
        if given is None:
            return "", None
        if isinstance(given, str):
            return given, None
        if isinstance(given, bool | int):
            return str(given), None
        return given, f"Value must be a string; got {describe(given)}"
    if kind == "number":
        if given is None:
            return 0, None
        if isinstance(given, int | float):
            return given, None
        if isinstance(given, str):
            for convert in (int, float):
                try:
                    return convert(given), None
                except ValueError:
                    pass
        return given, f"{describe(given)} is not a number"
    if kind == "boolean":
        if given is None:
            return False, None
        if isinstance(given, bool):
            return given, None
        if isinstance(given, str) and given.lower() in ("true", "false"):
            return given.lower() == "true", None
        return given, f"{describe(given)} is not a valid boolean"
    empty: dict[object, object] | list[object] = {} if kind == "json" else []
    if given is None:
        return empty, None
    if isinstance(given, type(empty)):
        return given, None
    return given, f"{describe(given)} is not a {'map' if kind == 'json' else 'list'}"


def random_string(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    """Checks it as Heat's `validate` does; records it when every property is known now."""
    report = stack.ctx.report
    where = child(res.path, "properties")
    check_props(res, props, report, RANDOM_PROPS)
    if first_symbolic(props) is not None:
        return  # a value only the cloud knows: a deployment input of it says so (deployments.py)
    before = len(report.out.items)
    length = _whole(props.get("length", 32), child(where, "length"), report, "length")
    sequence = props.get("sequence")
    classes = _entries(props.get("character_classes"), child(where, "character_classes"), report)
    sequences = _entries(
        props.get("character_sequences"), child(where, "character_sequences"), report
    )
    chosen: list[tuple[str, int]] = []
    if sequence is not None:
        if sequence not in CHARACTER_CLASSES:
            report.problem(
                child(where, "sequence"), f"sequence is one of {', '.join(CHARACTER_CLASSES)}"
            )
        elif classes or sequences:
            report.problem(
                child(where, "sequence"),
                "the deprecated 'sequence' cannot be used with 'character_classes' or "
                "'character_sequences'",
            )
        else:
            chosen.append((str(sequence), 1))
    for at, entry in classes:
        _check_keys(entry, at, report, ("class", "min"))
        name = entry.get("class", "lettersdigits")
        if name not in CHARACTER_CLASSES:
            report.problem(child(at, "class"), f"class is one of {', '.join(CHARACTER_CLASSES)}")
            continue
        chosen.append((str(name), _whole(entry.get("min", 1), child(at, "min"), report, "min")))
    picked: list[tuple[str, int]] = []
    for at, entry in sequences:
        _check_keys(entry, at, report, ("sequence", "min"))
        chars = entry.get("sequence")
        if isinstance(chars, int | float) and not isinstance(chars, bool):
            chars = str(chars)
        if not isinstance(chars, str) or not chars:
            report.problem(child(at, "sequence"), "sequence is a non-empty text of characters")
            continue
        picked.append((chars, _whole(entry.get("min", 1), child(at, "min"), report, "min")))
    stack.shape.randoms[res.name] = None
    if len(report.out.items) > before:
        return
    if sum(n for _, n in chosen) + sum(n for _, n in picked) > length:
        report.problem(
            child(where, "length"),
            f"length {length} is smaller than the character classes' and sequences' minimums "
            "combined",
        )
        return
    salt = props.get("salt")
    stack.shape.randoms[res.name] = RandomShape(
        res.name,
        res.path,
        length,
        tuple(chosen),
        tuple(picked),
        "" if salt is None else json.dumps(to_json(salt), sort_keys=True),
    )


def _whole(value: object, path: str, report: Report, what: str) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 512:
        report.problem(path, f"{what} is a whole number from 1 to 512")
        return 1
    return value


def _entries(value: object, path: str, report: Report) -> list[tuple[str, dict[str, object]]]:
    """A list of mappings (character classes or sequences) with their pointers."""
    if value is None:
        return []
    if not isinstance(value, list):
        report.problem(path, f"expected a list, found {describe(value)}")
        return []
    if len(value) > MAX_ENTRIES:
        report.problem(path, f"at most {MAX_ENTRIES} entries, found {len(value)}")
        return []
    out: list[tuple[str, dict[str, object]]] = []
    for i, entry in enumerate(value):
        if isinstance(entry, dict):
            out.append((child(path, str(i)), {str(k): v for k, v in entry.items()}))
        else:
            report.problem(child(path, str(i)), f"expected a mapping, found {describe(entry)}")
    return out


def _check_keys(
    entry: dict[str, object], path: str, report: Report, known: tuple[str, ...]
) -> None:
    for key in entry:
        if key not in known:
            report.problem(child(path, key), f"unknown key '{key}'; one of {', '.join(known)}")

"""Heat's own resources that make no node: OS::Heat::None, Value and RandomString.

`None` is what environments map a role to when it should not exist (a single-node
environment's server group, for instance); `Value` passes a value along, and its `value`
attribute is known before anything exists, so `get_attr` on it evaluates; a `RandomString`
stays unknown until run time.
"""

from __future__ import annotations

from shoal.spec.collect import child
from shoal.spec.hot.context import Resource, StackView, check_props

VALUE_PROPS = frozenset({"value", "type"})
RANDOM_PROPS = frozenset({"length", "sequence", "character_classes", "character_sequences", "salt"})
_VALUE_TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")


def none(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    """Accepts any properties, as Heat's does."""


def value(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, VALUE_PROPS, ("value",))
    kind = props.get("type")
    if kind is not None and kind not in _VALUE_TYPES:
        report.problem(
            child(res.path, "properties", "type"), f"type is one of {', '.join(_VALUE_TYPES)}"
        )


def random_string(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, RANDOM_PROPS)
    length = props.get("length", 32)
    if isinstance(length, str) and length.isdigit():
        length = int(length)
    if not isinstance(length, int) or isinstance(length, bool) or not 1 <= length <= 512:
        report.problem(
            child(res.path, "properties", "length"), "length is a whole number from 1 to 512"
        )

"""`OS::Heat::ResourceGroup` as a Shoal node group: `count` copies of its `resource_def`.

The member is a server, or a nested template (a custom type from the environment's registry)
whose servers and volumes become the group's unit. Heat names members 0..count-1 and replaces
`index_var` (default `%index%`) in the definition; a placement shape never depends on it, so the
member is read once with the index 0. `removal_policies` name particular members to remove,
which Shoal leaves to the group's deletion policy: read, checked and noticed.
"""

from __future__ import annotations

from shoal.documents.collect import child
from shoal.documents.hot.context import Resource, StackView, check_props
from shoal.documents.hot.functions import BROKEN
from shoal.documents.hot.shapes import GroupShape
from shoal.documents.hot.values import is_symbolic
from shoal.documents.tree import describe

PROPS = frozenset(
    {"count", "index_var", "resource_def", "removal_policies", "removal_policies_mode"}
)
_DEF_KEYS = frozenset({"type", "properties", "metadata"})
MAX_COUNT = 10_000


def resource_group(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, PROPS, ("resource_def",))
    where = child(res.path, "properties")
    count = props.get("count")
    if count is None:
        count = 1  # Heat's default, null included
    elif (isinstance(count, str) and count.strip().isdigit() and len(count) < 10) or (
        isinstance(count, float) and count.is_integer()
    ):
        count = int(count)
    if is_symbolic(count):
        if count != BROKEN:
            report.cannot(
                "count known only at run time",
                child(where, "count"),
                "the count must be known before the cluster exists",
            )
        count = None
    elif not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_COUNT:
        report.problem(
            child(where, "count"),
            f"count is a whole number from 0 to {MAX_COUNT}, found {describe(count)}",
        )
        count = None
    else:
        props["count"] = count  # as Heat's property gives it (an integer; null is 1)
    index_var = props.get("index_var")
    if index_var is None:
        index_var = "%index%"
    elif not isinstance(index_var, str) or len(index_var) < 3:
        # Heat's schema: text of at least 3 characters
        report.problem(child(where, "index_var"), "index_var is text of 3 characters or more")
        index_var = "%index%"
    _removal(stack, props.get("removal_policies"), child(where, "removal_policies"))
    mode = props.get("removal_policies_mode", "append")
    if mode not in ("append", "update"):
        report.problem(
            child(where, "removal_policies_mode"), "removal_policies_mode is append or update"
        )
    rdef = props.get("resource_def")
    if not isinstance(rdef, dict):
        if rdef is not None:
            report.problem(
                child(where, "resource_def"),
                f"resource_def must be a mapping, found {describe(rdef)}",
            )
        return
    dwhere = child(where, "resource_def")
    for key in rdef:
        if key not in _DEF_KEYS:
            report.problem(child(dwhere, str(key)), f"resource_def has no key '{key}'")
    kind = rdef.get("type")
    if not isinstance(kind, str):
        report.problem(dwhere, "resource_def needs a 'type'")
        return
    inner = _with_index(rdef.get("properties") or {}, index_var, "0")
    if not isinstance(inner, dict):
        report.problem(child(dwhere, "properties"), "properties must be a mapping")
        return
    mark = report.mark()
    member = stack.member(res, kind, inner, dwhere)
    if count == 0 and report.forget_since(mark):
        stack.shape.empty_groups.add(res.name)
        # Heat does not check a group of none (a TripleO environment switches a role off with
        # a count of 0, its flavor or parameters possibly absent): neither does Shoal.
        report.notice(
            dwhere, "the member of a group of count 0 is not checked (as in Heat); left out"
        )
        return
    if member is not None:
        stack.shape.groups.append(GroupShape(res.name, res.path, count, member))


def _removal(stack: StackView, value: object, path: str) -> None:
    if value is None or value == []:
        return
    ok = isinstance(value, list) and all(
        isinstance(p, dict)
        and set(p) <= {"resource_list"}
        and isinstance(p.get("resource_list", []), list)
        for p in value
    )
    if not ok:
        stack.ctx.report.problem(path, "removal_policies is a list of {resource_list: [...]}")
        return
    stack.ctx.report.notice(
        path,
        "removal_policies are not followed: Shoal chooses which replicas to remove by the "
        "group's deletion policy",
    )


def _with_index(value: object, var: str, index: str) -> object:
    if isinstance(value, str):
        return value.replace(var, index)
    if isinstance(value, dict):
        return {k: _with_index(v, var, index) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_index(v, var, index) for v in value]
    return value

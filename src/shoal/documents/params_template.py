"""A native document made concrete: parameters substituted, conditions applied, roles remapped.

Runs on the parsed tree before the native reader, so the reader (and every check after it)
sees an ordinary document. `{param: NAME}` is replaced by the parameter's value wherever the
document has a value (counts, flavors, zones, …); inside a deployment's inputs it is left for
the software reader, which turns a hidden parameter into a secret. An element switched off by
its `condition:` is replaced by `DISABLED` in its list (so the pointers of the others stay
true) and skipped by the reader; a deployment or config switched off is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import ProblemList, child
from shoal.documents.environment_native import Environment, RoleShape, Shape
from shoal.documents.params import (
    DISABLED,
    MAX_VALUE_DEPTH,
    ParameterTable,
    apply_values,
    read_parameters,
)
from shoal.documents.params_conditions import Conditions
from shoal.documents.tree import Pairs, describe, is_list, is_mapping, pairs_of
from shoal.model.enums import Rule

_ELEMENT_LISTS = ("node_groups", "instances", "groupings")
_TEMPLATE_KEYS = ("parameters", "conditions", "software", "outputs", "workloads")


@dataclass(slots=True)
class Prepared:
    tree: object
    """The cluster part of the document, concrete."""
    software: object | None
    """The `software` section (parameters substituted, conditions applied), or None."""
    params: ParameterTable = field(default_factory=ParameterTable)
    outputs: object | None = None
    """The `outputs` section (conditions applied; `{param: ...}` left for its reader, which
    refuses hidden parameters), or None."""
    workloads: object | None = None
    """The `workloads` section (parameters substituted; `{param: ...}` in env left for its
    reader, like a deployment's inputs), or None."""
    unresolved: frozenset[str] = frozenset()
    """Pointers of `{param: ...}` that gave no value (already reported): the readers' own
    complaint about the missing value there would say the same thing again."""
    origins: dict[str, Origin] = field(default_factory=dict)
    """Pointers of what an environment's role put into the concrete tree (a node group's
    profile or count, an instance, a grouping) -> where the environment said it: a problem
    found there is the environment's to fix, and the document has no such element or value."""

    def relocate(self, path: str) -> str:
        """Where a problem found at `path` of the concrete tree points for the user."""
        at = path
        while at:
            origin = self.origins.get(at)
            if origin is not None:
                return origin.path if origin.whole else origin.path + path[len(at) :]
            at = at.rpartition("/")[0]
        return path


@dataclass(frozen=True, slots=True)
class Origin:
    path: str
    whole: bool = False
    """The element was made from the role as a whole: a problem inside it points at the role's
    field that made it, not at a path below that field."""


def prepare(data: object, env: Environment, out: ProblemList) -> Prepared:
    """The concrete document; problems are added to `out` and the tree is still returned."""
    if not is_mapping(data):
        return Prepared(data, None)
    top = pairs_of(data)
    raw = {k: v for k, v in top if isinstance(k, str) and k in _TEMPLATE_KEYS}
    params = read_parameters(raw.get("parameters"), "/parameters", out)
    apply_values(params, env.parameters, env.parameter_defaults, out)
    conditions = Conditions(raw.get("conditions"), "/conditions", params, out)
    conditions.check_all()
    sub = _Substitution(params, out)
    rest = Pairs((k, v) for k, v in top if not (isinstance(k, str) and k in _TEMPLATE_KEYS))
    tree = sub.walk(rest, "", 0)
    assert isinstance(tree, Pairs)
    tree = _switch_elements(tree, conditions)
    origins: dict[str, Origin] = {}
    tree = _apply_roles(tree, env, out, origins)
    software = raw.get("software")
    if software is not None:
        software = _switch_software(sub.walk(software, "/software", 0), conditions)
    outputs = raw.get("outputs")
    if outputs is not None:
        outputs = _switch_outputs(outputs, conditions)
    workloads = raw.get("workloads")
    if workloads is not None:
        workloads = _switch_named(sub.walk(workloads, "/workloads", 0), "/workloads", conditions)
    return Prepared(
        tree,
        software,
        params,
        outputs=outputs,
        workloads=workloads,
        unresolved=frozenset(sub.unresolved),
        origins=origins,
    )


class _Substitution:
    def __init__(self, params: ParameterTable, out: ProblemList) -> None:
        self.params = params
        self.out = out
        self.unresolved: set[str] = set()

    def walk(self, value: object, path: str, depth: int) -> object:
        if depth > MAX_VALUE_DEPTH + 8:
            self.out.add(path, f"the document nests deeper than {MAX_VALUE_DEPTH + 8} levels")
            return None
        if is_mapping(value):
            items = pairs_of(value)
            if len(items) == 1 and _is_input(path) and items[0][0] in ("param", "value"):
                return value  # a source or an escaped literal: the software reader's
            if len(items) == 1 and items[0][0] == "param":
                result = self.param(items[0][1], child(path, "param"))
                if result is None:
                    self.unresolved.add(path)
                return result
            return Pairs((k, self.walk(v, child(path, str(k)), depth + 1)) for k, v in items)
        if is_list(value):
            return [self.walk(v, child(path, i), depth + 1) for i, v in enumerate(value)]
        return value

    def param(self, name: object, where: str) -> object:
        p = self.params.get(name) if isinstance(name, str) else None
        if p is None:
            known = ", ".join(sorted(self.params.params)) or "none"
            self.out.add(where, f"no parameter named {describe(name)} (declared: {known})")
            return None
        if p.broken:
            return None
        if not p.has_value:
            self.out.add(
                where,
                f"parameter '{p.name}' has no value: give it a default, or a value in an "
                "environment's parameters",
            )
            return None
        return p.value


def _is_input(path: str) -> bool:
    """A deployment's input source (/software/deployments/NAME/inputs/INPUT) or a workload
    container's env value (/workloads/NAME/containers/I/env/VAR)."""
    parts = path.split("/")
    if len(parts) == 7 and parts[1] == "workloads" and parts[3] == "containers":
        return parts[5] == "env"
    return len(parts) == 6 and parts[1:3] == ["software", "deployments"] and parts[4] == "inputs"


def _without(value: object, key: str) -> object:
    return Pairs((k, v) for k, v in pairs_of(value) if k != key)


def _condition_of(value: object) -> object:
    return next((v for k, v in pairs_of(value) if k == "condition"), None)


def _switch_elements(tree: Pairs, conditions: Conditions) -> Pairs:
    result = Pairs()
    for key, value in tree:
        if key in _ELEMENT_LISTS and is_list(value):
            items: list[object] = []
            for i, item in enumerate(value):
                if not is_mapping(item) or not any(k == "condition" for k, _ in pairs_of(item)):
                    items.append(item)
                    continue
                where = child("", str(key), i, "condition")
                on = conditions.switch(_condition_of(item), where)
                items.append(_without(item, "condition") if on else DISABLED)
            value = items
        result.append((key, value))
    return result


def _switch_software(software: object, conditions: Conditions) -> object:
    if not is_mapping(software):
        return software
    result = Pairs()
    for key, section in pairs_of(software):
        if key in ("configs", "deployments") and is_mapping(section):
            kept = Pairs()
            for name, body in pairs_of(section):
                if is_mapping(body) and any(k == "condition" for k, _ in pairs_of(body)):
                    where = child("/software", str(key), str(name), "condition")
                    if not conditions.switch(_condition_of(body), where):
                        continue
                    body = _without(body, "condition")
                kept.append((name, body))
            section = kept
        result.append((key, section))
    return result


def _switch_outputs(outputs: object, conditions: Conditions) -> object:
    return _switch_named(outputs, "/outputs", conditions)


def _switch_named(section: object, at: str, conditions: Conditions) -> object:
    """A mapping of named elements (outputs, workloads) without those switched off."""
    if not is_mapping(section):
        return section
    kept = Pairs()
    for name, body in pairs_of(section):
        if is_mapping(body) and any(k == "condition" for k, _ in pairs_of(body)):
            where = child(at, str(name), "condition")
            if not conditions.switch(_condition_of(body), where):
                continue
            body = _without(body, "condition")
        kept.append((name, body))
    return kept


def _field(value: object, key: str) -> object:
    return next((v for k, v in pairs_of(value) if k == key), None)


def _set(value: object, key: str, new: object) -> Pairs:
    items = pairs_of(value)
    if any(k == key for k, _ in items):
        return Pairs((k, new if k == key else v) for k, v in items)
    return Pairs([*items, (key, new)])


def _apply_roles(
    tree: Pairs, env: Environment, out: ProblemList, origins: dict[str, Origin]
) -> Pairs:
    if not env.roles:
        return tree
    groups = _field(tree, "node_groups")
    new_groups: list[object] = list(groups) if is_list(groups) else []
    # Each appended element with where the environment asked for it, and where its fields
    # came from (relative pointer -> origin).
    extra_instances: list[tuple[object, str, dict[str, Origin]]] = []
    extra_groupings: list[tuple[object, str, dict[str, Origin]]] = []
    for i, group in enumerate(new_groups):
        if not is_mapping(group):
            continue
        role = _field(group, "role")
        shape = env.roles.get(role) if isinstance(role, str) else None
        if shape is None:
            continue
        shape.used = True
        name = _field(group, "name")
        if shape.shape is Shape.INSTANCE:
            if _field(group, "unit") is not None:
                out.add(
                    shape.path,
                    f"node group {describe(name)} is a unit of several parts and cannot "
                    "become one instance; give it a group shape",
                )
                continue
            at = child("/node_groups", i)
            fields = {
                "/name": Origin(at + "/name"),
                "/profile": Origin(shape.path + "/profile" if shape.profile else at + "/profile"),
                "/zone": Origin(at + "/zones/0"),
                "/depends_on": Origin(at + "/depends_on"),
            }
            new_groups[i] = DISABLED
            extra_instances.append((_as_instance(group, shape), shape.path + "/shape", fields))
            continue
        new_groups[i] = _reshaped(group, shape)
        at = child("/node_groups", i)
        if shape.profile is not None:
            origins[at + "/profile"] = Origin(shape.path + "/profile")
        if shape.count is not None:
            origins[at + "/count"] = Origin(shape.path + "/count")
        if shape.anti_affinity is not None and isinstance(name, str):
            extra_groupings.append(
                (
                    Pairs(
                        [
                            ("name", f"{name}-{shape.anti_affinity}-apart"),
                            ("members", [name]),
                            ("rule", str(Rule.ANTI_AFFINITY)),
                            ("scope", str(shape.anti_affinity)),
                        ]
                    ),
                    shape.path + "/anti_affinity",
                    {},
                )
            )
    for shape in env.roles.values():
        if not shape.used:
            out.add(shape.path, f"no node group of the document has role '{shape.role}'")
    result = tree
    if is_list(groups):
        result = _set(result, "node_groups", new_groups)
    for key, extra in (("instances", extra_instances), ("groupings", extra_groupings)):
        if extra:
            current = _field(result, key)
            before = list(current) if is_list(current) else []
            result = _set(result, key, [*before, *(element for element, _, _ in extra)])
            for k, (_, said, fields) in enumerate(extra):
                at = child("/" + key, len(before) + k)
                origins[at] = Origin(said, whole=True)
                origins.update((at + rel, origin) for rel, origin in fields.items())
    return result


def _reshaped(group: object, shape: RoleShape) -> object:
    result: object = group
    if shape.profile is not None:
        result = _set(_without(result, "unit"), "profile", shape.profile)
    if shape.count is not None:
        result = _set(result, "count", shape.count)
        low, high = _field(result, "min"), _field(result, "max")
        if isinstance(low, int) and low > shape.count:
            result = _set(result, "min", shape.count)
        if isinstance(high, int) and high < shape.count:
            result = _set(result, "max", shape.count)
    return result


def _as_instance(group: object, shape: RoleShape) -> Pairs:
    """A node group written as one instance of the same name (deployments still find it)."""
    instance = Pairs([("name", _field(group, "name"))])
    instance.append(("profile", shape.profile or _field(group, "profile")))
    zones = _field(group, "zones")
    if is_list(zones) and len(zones) == 1:
        instance.append(("zone", zones[0]))
    depends = _field(group, "depends_on")
    if depends is not None:
        instance.append(("depends_on", depends))
    return instance

"""A stack's template read again by Shoal's HOT reader: its resources, their evaluated
properties, its parameters, and the TestResource knobs that shape its statuses.

Reading a template is not free (a large one takes milliseconds), and every GET of a stack, its
resources or events needs it: readings are kept per stack and body version, a bounded number.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from shoal.documents.hot.load import HotResult, read_body
from shoal.model.inventory import Inventory
from shoal.service.heat.statuses import Knobs, knobs_of
from shoal.store.heat import StackRow

MAX_KEPT = 256
TEST = "OS::Heat::TestResource"
GROUP = "OS::Heat::ResourceGroup"


@dataclass(frozen=True, slots=True)
class ResourceDef:
    """One resource of the top template, as read."""

    name: str
    type: str
    props: dict[str, Any]
    depends_on: tuple[str, ...]
    description: str
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reading:
    result: HotResult
    resources: tuple[ResourceDef, ...]
    description: str
    parameters: dict[str, Any]
    hidden: frozenset[str]
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The TestResources' properties by resource (a group's member under the group's name)."""

    def knobs(self, action: str) -> Knobs:
        """The longest wait and any failure of the stack's TestResources for `action`."""
        wait, fail = 0.0, False
        for props in self.tests.values():
            k = knobs_of(props, action)
            wait, fail = max(wait, k.wait_s), fail or k.fail
        return Knobs(wait, fail)

    def resource(self, name: str) -> ResourceDef | None:
        return next((r for r in self.resources if r.name == name), None)


class Readings:
    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, float], Reading] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, row: StackRow, inventory: Inventory) -> Reading:
        key = (row.cluster_id, row.updated_at or row.created_at)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        reading = read_stack({"stack_name": row.name, **row.body}, inventory)
        with self._lock:
            self._kept[key] = reading
            while len(self._kept) > MAX_KEPT:
                self._kept.popitem(last=False)
        return reading


def read_stack(body: dict[str, Any], inventory: Inventory) -> Reading:
    result = read_body(body, inventory)
    template = body.get("template") if isinstance(body.get("template"), dict) else {}
    assert isinstance(template, dict)
    raw = template.get("resources") if isinstance(template.get("resources"), dict) else {}
    assert isinstance(raw, dict)
    props = result.shape.props if result.shape is not None else {}
    resources: list[ResourceDef] = []
    tests: dict[str, dict[str, Any]] = {}
    for name, res in raw.items():
        if not isinstance(res, dict) or str(name) not in props:
            continue  # switched off by its condition, or not read
        kind = str(res.get("type", ""))
        p = dict(props[str(name)])
        deps = res.get("depends_on") or []
        resources.append(
            ResourceDef(
                str(name),
                kind,
                p,
                tuple(str(d) for d in ([deps] if isinstance(deps, str) else deps)),
                str(res.get("description") or ""),
                dict(res["metadata"]) if isinstance(res.get("metadata"), dict) else {},
            )
        )
        if kind == TEST:
            tests[str(name)] = p
        member = p.get("resource_def") if kind == GROUP else None
        if isinstance(member, dict) and member.get("type") == TEST and p.get("count") != 0:
            inner = member.get("properties")
            tests[str(name)] = dict(inner) if isinstance(inner, dict) else {}
    params, hidden = _parameters(template, body)
    return Reading(
        result,
        tuple(resources),
        str(template.get("description") or ""),
        params,
        frozenset(hidden),
        tests,
    )


def _parameters(template: dict[str, Any], body: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The values Heat shows for a stack's parameters: the default, then the environment's
    `parameter_defaults` and `parameters`, then the body's `parameters`; hidden ones masked."""
    declared = template.get("parameters") if isinstance(template.get("parameters"), dict) else {}
    assert isinstance(declared, dict)
    env = merged_environment(body)
    given: dict[str, Any] = {}
    for source in (env.get("parameter_defaults"), env.get("parameters")):
        if isinstance(source, dict):
            given.update(source)
    out: dict[str, Any] = {}
    hidden: set[str] = set()
    for name, decl in declared.items():
        d = decl if isinstance(decl, dict) else {}
        value = given.get(name, d.get("default"))
        if d.get("hidden") is True:
            hidden.add(str(name))
            out[str(name)] = "******"
        else:
            out[str(name)] = value if isinstance(value, str) else _text(value)
    return out, hidden


def merged_environment(body: dict[str, Any]) -> dict[str, Any]:
    """A stack's environments merged in order, section by section, key by key (Heat's
    `GET .../environment`), with the body's parameters last."""
    out: dict[str, Any] = {
        "parameters": {},
        "parameter_defaults": {},
        "resource_registry": {},
        "event_sinks": [],
    }
    envs = body.get("environments") if isinstance(body.get("environments"), list) else []
    assert isinstance(envs, list)
    for env in [*envs, {"parameters": body.get("parameters") or {}}]:
        if not isinstance(env, dict):
            continue
        for section, value in env.items():
            old = out.get(section)
            if isinstance(old, dict) and isinstance(value, dict):
                out[section] = {**old, **value}
            else:
                out[section] = value
    return out


def _text(value: object) -> str:
    import json

    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value)

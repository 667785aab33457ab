"""The body of `POST /v1/clusters/{id}/actions`, checked before the cluster is looked up.

Senlin parsed an action's body into a request object first and only then asked its engine
about the cluster, so a bad body is a 400 about the body even for a cluster that does not
exist. `parse_action` does the checks that need no database, in Senlin's order and words; the
rest (sizes against the cluster, nodes that exist) happens in `SenlinClusters`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shoal.service.resize import Adjustment
from shoal.service.senlin.bodies import check_fields, flag, integer, node_list
from shoal.service.senlin.errors import BadRequest

CLUSTER_ACTIONS = (
    "add_nodes",
    "del_nodes",
    "replace_nodes",
    "resize",
    "scale_out",
    "scale_in",
    "policy_attach",
    "policy_detach",
    "policy_update",
    "check",
    "recover",
    "complete_lifecycle",
)
MAX_COUNT = 1_000_000
"""No count, size or number a request names may be larger (the service's quotas then apply)."""


@dataclass(frozen=True, slots=True)
class NodeRefs:
    """add_nodes: distinct node references, at least one."""

    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DelNodes:
    nodes: tuple[str, ...]
    destroy_after_deletion: bool = False


@dataclass(frozen=True, slots=True)
class ReplaceNodes:
    """Old node reference → new node reference, the new ones distinct."""

    pairs: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ResizeBody:
    """Senlin's resize: `number` is an int except for CHANGE_IN_PERCENTAGE; each field is
    None when the body left it out."""

    adjustment_type: Adjustment | None = None
    number: float | None = None
    min_size: int | None = None
    max_size: int | None = None
    min_step: int | None = None
    strict: bool | None = None
    nodegroup: str | None = None


@dataclass(frozen=True, slots=True)
class ScaleBody:
    count: int | None = None
    nodegroup: str | None = None


@dataclass(frozen=True, slots=True)
class PolicyBody:
    """policy_attach, policy_update (with `enabled`) and policy_detach (without)."""

    policy_id: str
    enabled: bool | None = None


@dataclass(frozen=True, slots=True)
class LifecycleBody:
    lifecycle_action_token: str


@dataclass(frozen=True, slots=True)
class RecoverBody:
    """check and recover: Senlin accepted any map here; only `operation` is read (and
    checked against the recovery methods once the cluster is known)."""

    operation: object = None


ActionBody = (
    NodeRefs | DelNodes | ReplaceNodes | ResizeBody | ScaleBody | PolicyBody | LifecycleBody
) | RecoverBody


@dataclass(frozen=True, slots=True)
class ClusterAction:
    """One checked cluster action: its Senlin name and its typed body."""

    name: str
    body: ActionBody


def bounded(name: str, value: int) -> int:
    if abs(value) > MAX_COUNT:
        raise BadRequest(f"Value must be <= {MAX_COUNT} for field '{name}'.")
    return value


def parse_action(body: object) -> ClusterAction:
    if not isinstance(body, dict) or not body:
        raise BadRequest("No action specified")
    if len(body) > 1:
        raise BadRequest("Multiple actions specified")
    name, data = next(iter(body.items()))
    if name not in CLUSTER_ACTIONS:
        raise BadRequest(f"Unrecognized action '{name}' specified")
    if data is None and name in ("check", "recover"):
        data = {}
    if not isinstance(data, dict):
        raise BadRequest("The data provided is not a map")
    return ClusterAction(name, _PARSERS[name](data))


def _recover(data: Mapping[str, object]) -> RecoverBody:
    return RecoverBody(data.get("operation"))


def _add_nodes(data: Mapping[str, object]) -> NodeRefs:
    return NodeRefs(tuple(node_list(data)))


def _del_nodes(data: Mapping[str, object]) -> DelNodes:
    nodes = node_list(data)
    destroy = flag("destroy_after_deletion", data.get("destroy_after_deletion", False))
    return DelNodes(tuple(nodes), destroy)


def _replace_nodes(data: Mapping[str, object]) -> ReplaceNodes:
    nodes = data.get("nodes")
    if not nodes or not isinstance(nodes, dict):
        raise BadRequest("The data provided is not a map")
    for old, new in nodes.items():
        if new is None:
            raise BadRequest(f"Field `nodes[{old}]' cannot be None")
    values = [str(v) for v in nodes.values()]
    if len(set(values)) != len(values):
        raise BadRequest("Map contains duplicated values")
    return ReplaceNodes({str(k): str(v) for k, v in nodes.items()})


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise BadRequest(f"Value '{value}' is not acceptable for field 'number'.")
    try:
        number = float(value)
    except ValueError:
        raise BadRequest(f"Value '{value}' is not acceptable for field 'number'.") from None
    if not math.isfinite(number) or abs(number) > MAX_COUNT:
        raise BadRequest(f"Value must be <= {MAX_COUNT} for field 'number'.")
    return number


def _resize(data: Mapping[str, object]) -> ResizeBody:
    keys = ("adjustment_type", "number", "min_size", "max_size")
    if not any(data.get(k) is not None for k in keys):
        raise BadRequest("Not enough parameters to do resize action.")
    check_fields(data, optional=(*keys, "min_step", "strict", "nodegroup"))
    adjustment: Adjustment | None = None
    number: float | None = None
    raw_type = data.get("adjustment_type")
    if raw_type is not None:
        if raw_type not in {str(a) for a in Adjustment}:
            raise BadRequest(f"Value '{raw_type}' is not acceptable for field 'adjustment_type'.")
        adjustment = Adjustment(str(raw_type))
    if data.get("number") is not None:
        number = _number(data["number"])
    if adjustment is not None and number is None:
        raise BadRequest("Missing number value for size adjustment.")
    if number is not None and adjustment is None:
        raise BadRequest("Missing adjustment_type value for size adjustment.")
    if adjustment is Adjustment.EXACT_CAPACITY and number is not None and number < 0:
        raise BadRequest(
            "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'."
        )
    if number is not None and adjustment is not Adjustment.CHANGE_IN_PERCENTAGE:
        if not number.is_integer():
            raise BadRequest(f"Value '{data['number']}' is not acceptable for field 'number'.")
        number = int(number)

    def sized(key: str, minimum: int) -> int | None:
        value = data.get(key)
        return None if value is None else bounded(key, integer(key, value, minimum=minimum))

    low, high = sized("min_size", 0), sized("max_size", -1)
    if low is not None and high is not None and high > 0 and low > high:
        raise BadRequest(
            f"The specified min_size ({low}) is greater than the specified max_size ({high})."
        )
    strict = data.get("strict")
    group = data.get("nodegroup")
    return ResizeBody(
        adjustment,
        number,
        low,
        high,
        sized("min_step", 0),
        None if strict is None else flag("strict", strict),
        None if group is None else str(group),
    )


def _scale(data: Mapping[str, object]) -> ScaleBody:
    check_fields(data, optional=("count", "nodegroup"))
    count = data.get("count")
    group = data.get("nodegroup")
    return ScaleBody(
        None if count is None else bounded("count", integer("count", count, minimum=0)),
        None if group is None else str(group),
    )


def _policy(data: Mapping[str, object], *, with_enabled: bool) -> PolicyBody:
    check_fields(data, ("policy_id",), ("enabled",) if with_enabled else ())
    enabled = None
    if with_enabled and "enabled" in data:
        enabled = flag("enabled", data["enabled"])
    return PolicyBody(str(data["policy_id"]), enabled)


def _lifecycle(data: Mapping[str, object]) -> LifecycleBody:
    check_fields(data, ("lifecycle_action_token",))
    return LifecycleBody(str(data["lifecycle_action_token"]))


_PARSERS: dict[str, Callable[[Mapping[str, object]], ActionBody]] = {
    "add_nodes": _add_nodes,
    "del_nodes": _del_nodes,
    "replace_nodes": _replace_nodes,
    "resize": _resize,
    "scale_out": _scale,
    "scale_in": _scale,
    "policy_attach": lambda d: _policy(d, with_enabled=True),
    "policy_update": lambda d: _policy(d, with_enabled=True),
    "policy_detach": lambda d: _policy(d, with_enabled=False),
    "complete_lifecycle": _lifecycle,
    "check": _recover,
    "recover": _recover,
}

"""The body of `POST /v1/clusters/{id}/actions`, checked before the cluster is looked up.

Senlin parsed an action's body into a request object first and only then asked its engine
about the cluster, so a bad body is a 400 about the body even for a cluster that does not
exist. `parse_action` does the checks that need no database, in Senlin's order and words; the
rest (sizes against the cluster, nodes that exist) happens in `SenlinClusters`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
class ClusterAction:
    """One checked cluster action: its Senlin name and its parameters."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)


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
    return ClusterAction(name, _PARSERS.get(name, _as_is)(data))


def _as_is(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _add_nodes(data: dict[str, Any]) -> dict[str, Any]:
    return {"nodes": node_list(data)}


def _del_nodes(data: dict[str, Any]) -> dict[str, Any]:
    nodes = node_list(data)
    destroy = flag("destroy_after_deletion", data.get("destroy_after_deletion", False))
    return {"nodes": nodes, "destroy_after_deletion": destroy}


def _replace_nodes(data: dict[str, Any]) -> dict[str, Any]:
    nodes = data.get("nodes")
    if not nodes or not isinstance(nodes, dict):
        raise BadRequest("The data provided is not a map")
    for old, new in nodes.items():
        if new is None:
            raise BadRequest(f"Field `nodes[{old}]' cannot be None")
    values = [str(v) for v in nodes.values()]
    if len(set(values)) != len(values):
        raise BadRequest("Map contains duplicated values")
    return {"nodes": {str(k): str(v) for k, v in nodes.items()}}


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


def _resize(data: dict[str, Any]) -> dict[str, Any]:
    keys = ("adjustment_type", "number", "min_size", "max_size")
    if not any(data.get(k) is not None for k in keys):
        raise BadRequest("Not enough parameters to do resize action.")
    check_fields(data, optional=(*keys, "min_step", "strict", "nodegroup"))
    out: dict[str, Any] = {}
    raw_type = data.get("adjustment_type")
    if raw_type is not None:
        if raw_type not in {str(a) for a in Adjustment}:
            raise BadRequest(f"Value '{raw_type}' is not acceptable for field 'adjustment_type'.")
        out["adjustment_type"] = Adjustment(str(raw_type))
    if data.get("number") is not None:
        out["number"] = _number(data["number"])
    if "adjustment_type" in out and "number" not in out:
        raise BadRequest("Missing number value for size adjustment.")
    if "number" in out and "adjustment_type" not in out:
        raise BadRequest("Missing adjustment_type value for size adjustment.")
    adjustment = out.get("adjustment_type")
    if adjustment is Adjustment.EXACT_CAPACITY and out["number"] < 0:
        raise BadRequest(
            "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'."
        )
    if adjustment is not None and adjustment is not Adjustment.CHANGE_IN_PERCENTAGE:
        if not float(out["number"]).is_integer():
            raise BadRequest(f"Value '{data['number']}' is not acceptable for field 'number'.")
        out["number"] = int(out["number"])
    for key, minimum in (("min_size", 0), ("max_size", -1)):
        if data.get(key) is not None:
            out[key] = bounded(key, integer(key, data[key], minimum=minimum))
    low, high = out.get("min_size"), out.get("max_size")
    if low is not None and high is not None and high > 0 and low > high:
        raise BadRequest(
            f"The specified min_size ({low}) is greater than the specified max_size ({high})."
        )
    if data.get("min_step") is not None:
        out["min_step"] = bounded("min_step", integer("min_step", data["min_step"], minimum=0))
    if data.get("strict") is not None:
        out["strict"] = flag("strict", data["strict"])
    if data.get("nodegroup") is not None:
        out["nodegroup"] = str(data["nodegroup"])
    return out


def _scale(data: dict[str, Any]) -> dict[str, Any]:
    check_fields(data, optional=("count", "nodegroup"))
    out: dict[str, Any] = {}
    if data.get("count") is not None:
        out["count"] = bounded("count", integer("count", data["count"], minimum=0))
    if data.get("nodegroup") is not None:
        out["nodegroup"] = str(data["nodegroup"])
    return out


def _policy(data: dict[str, Any], *, with_enabled: bool) -> dict[str, Any]:
    check_fields(data, ("policy_id",), ("enabled",) if with_enabled else ())
    out: dict[str, Any] = {"policy_id": str(data["policy_id"])}
    if with_enabled and "enabled" in data:
        out["enabled"] = flag("enabled", data["enabled"])
    return out


def _lifecycle(data: dict[str, Any]) -> dict[str, Any]:
    check_fields(data, ("lifecycle_action_token",))
    return {"lifecycle_action_token": str(data["lifecycle_action_token"])}


_PARSERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
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
}

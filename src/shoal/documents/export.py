"""A cluster back to a native document: what the service stores and edits.

Whatever format a cluster arrived in (native or vcluster), Shoal keeps it as one native
document, so node-group operations edit one shape and re-validate it with the same loader.
Profiles are written inline, flavors and images by name. Policies are written with their
non-default fields only (an all-default policy as `{}`, which is not the same as no policy), and
without fields their check or adjustment type does not use.
"""

from __future__ import annotations

from typing import Any

from shoal.documents.net_export import networking_document
from shoal.documents.outputs import outputs_document
from shoal.documents.software_export import secret_parameters, software_document
from shoal.documents.workloads_export import workload_document
from shoal.model.cluster import ClusterSpec, Grouping, Instance, NodeGroup
from shoal.model.enums import Objective, Rule
from shoal.model.policies import (
    AdjustmentType,
    CheckKind,
    DeletionPolicy,
    HealthPolicy,
    ScalingPolicy,
    StrayHandling,
    Threshold,
    UpdatePolicy,
)
from shoal.model.profile import Profile, ServerProfile


def profile_document(p: Profile) -> dict[str, Any]:
    if isinstance(p, ServerProfile):
        out: dict[str, Any] = {"type": "server", "flavor": p.flavor.name, "image": p.image.name}
        if p.metadata:
            out["metadata"] = dict(p.metadata)
        if p.networks:
            out["networks"] = list(p.networks)
        if p.security_groups:
            out["security_groups"] = list(p.security_groups)
        if p.floating_networks:
            out["floating_networks"] = dict(p.floating_networks)
    else:
        out = {"type": "volume", "size": p.size_gb}
        if p.volume_type:
            out["volume_type"] = p.volume_type
    if p.zone:
        out["zone"] = p.zone
    return out


def _number(value: float) -> int | float:
    """A whole number written without its decimal point."""
    return int(value) if float(value).is_integer() else float(value)


def _threshold(t: Threshold) -> int | str:
    return f"{t.value}%" if t.percent else t.value


def health_document(p: HealthPolicy) -> dict[str, Any]:
    d = HealthPolicy()
    out: dict[str, Any] = {}
    if p.check is not d.check:
        out["check"] = str(p.check)
    if p.check is CheckKind.HTTP and p.path != d.path:
        out["path"] = p.path
    if p.check is not CheckKind.PROVIDER and p.port is not None:
        out["port"] = p.port
    if p.check is CheckKind.HTTP and p.expected_codes != d.expected_codes:
        out["expected_codes"] = list(p.expected_codes)
    for key in ("interval_s", "timeout_s", "grace_s"):
        if getattr(p, key) != getattr(d, key):
            out[key] = _number(getattr(p, key))
    if p.failures != d.failures:
        out["failures"] = p.failures
    if p.recovery is not d.recovery:
        out["recovery"] = str(p.recovery)
    if p.max_unhealthy != d.max_unhealthy:
        out["max_unhealthy"] = _threshold(p.max_unhealthy)
    return out


def update_document(p: UpdatePolicy) -> dict[str, Any]:
    d = UpdatePolicy()
    out: dict[str, Any] = {}
    for key in ("max_unavailable", "max_surge", "failure_threshold"):
        if getattr(p, key) != getattr(d, key):
            out[key] = getattr(p, key)
    if p.pause_s != d.pause_s:
        out["pause_s"] = _number(p.pause_s)
    if p.health_gate is not d.health_gate:
        out["health_gate"] = p.health_gate
    if p.health_gate and p.gate_timeout_s != d.gate_timeout_s:
        out["gate_timeout_s"] = _number(p.gate_timeout_s)
    return out


def deletion_document(p: DeletionPolicy) -> dict[str, Any]:
    d = DeletionPolicy()
    out: dict[str, Any] = {}
    if p.victims is not d.victims:
        out["victims"] = str(p.victims)
    if p.balance_zones is not d.balance_zones:
        out["balance_zones"] = p.balance_zones
    return out


def scaling_document(p: ScalingPolicy) -> dict[str, Any]:
    d = ScalingPolicy()
    out: dict[str, Any] = {}
    if p.adjustment_type is not d.adjustment_type:
        out["adjustment_type"] = str(p.adjustment_type)
    if p.number != d.number:
        out["number"] = _number(p.number)
    if p.adjustment_type is AdjustmentType.CHANGE_IN_PERCENTAGE and p.min_step != d.min_step:
        out["min_step"] = p.min_step
    if p.cooldown_s != d.cooldown_s:
        out["cooldown_s"] = _number(p.cooldown_s)
    if p.strict is not d.strict:
        out["strict"] = p.strict
    return out


def node_group_document(g: NodeGroup) -> dict[str, Any]:
    out: dict[str, Any] = {"name": g.name}
    if g.is_unit:
        out["unit"] = {p.part: profile_document(p.profile) for p in g.parts}
    else:
        out["profile"] = profile_document(g.parts[0].profile)
    out["count"] = g.count
    if g.min_size:
        out["min"] = g.min_size
    if g.max_size is not None:
        out["max"] = g.max_size
    if g.zones:
        out["zones"] = list(g.zones)
    if g.labels:
        out["labels"] = dict(g.labels)
    if g.role:
        out["role"] = g.role
    if g.depends_on:
        out["depends_on"] = list(g.depends_on)
    if g.health is not None:
        out["health"] = health_document(g.health)
    if g.update is not None:
        out["update"] = update_document(g.update)
    if g.deletion is not None:
        out["deletion"] = deletion_document(g.deletion)
    if g.scaling is not None:
        out["scaling"] = scaling_document(g.scaling)
    return out


def _instance(i: Instance) -> dict[str, Any]:
    out: dict[str, Any] = {"name": i.name, "profile": profile_document(i.profile)}
    if i.zone:
        out["zone"] = i.zone
    if i.depends_on:
        out["depends_on"] = list(i.depends_on)
    return out


def _grouping(g: Grouping) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": g.name,
        "members": [str(m) for m in g.members],
        "rule": str(g.rule),
        "scope": str(g.scope),
    }
    if g.rule in (Rule.ANTI_AFFINITY, Rule.SOFT_ANTI_AFFINITY) and g.max_per_domain != 1:
        out["max_per_domain"] = g.max_per_domain
    if g.rule is Rule.SPREAD and g.max_skew != 1:
        out["max_skew"] = g.max_skew
    return out


def to_document(spec: ClusterSpec) -> dict[str, Any]:
    """The native document for `spec`; loading it again gives an equal cluster."""
    out: dict[str, Any] = {"name": spec.name}
    if spec.objective is not Objective.SPREAD:
        out["objective"] = str(spec.objective)
    if spec.metadata:
        out["metadata"] = dict(spec.metadata)
    if spec.health is not None:
        out["health"] = health_document(spec.health)
    if spec.deletion is not None:
        out["deletion"] = deletion_document(spec.deletion)
    if spec.strays is not StrayHandling.REPORT:
        out["strays"] = str(spec.strays)
    if spec.instances:
        out["instances"] = [_instance(i) for i in spec.instances]
    if spec.node_groups:
        out["node_groups"] = [node_group_document(g) for g in spec.node_groups]
    if spec.groupings:
        out["groupings"] = [_grouping(g) for g in spec.groupings]
    if spec.software.secrets:
        out["parameters"] = secret_parameters(spec.software)
    if spec.software.configs or spec.software.deployments:
        out["software"] = software_document(spec.software)
    if spec.outputs:
        out["outputs"] = outputs_document(spec.outputs)
    if spec.workloads:
        out["workloads"] = {w.name: workload_document(w) for w in spec.workloads}
    out.update(networking_document(spec.networking))
    return out

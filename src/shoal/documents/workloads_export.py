"""Workloads back to the native document (what `documents/export.py` stores): loading it again
gives equal `Workload`s. A Kubernetes manifest is stored as Shoal's own fields."""

from __future__ import annotations

from typing import Any

from shoal.documents.software_export import source_document
from shoal.model.policies import AdjustmentType, ScalingPolicy
from shoal.model.workloads import (
    Container,
    Probe,
    ProbeKind,
    RestartPolicy,
    RollingSettings,
    Workload,
    WorkloadRule,
    WorkloadRuleKind,
    WorkloadScope,
)


def workload_document(w: Workload) -> dict[str, Any]:
    out: dict[str, Any] = {
        "replicas": w.replicas,
        "containers": [_container(c) for c in w.containers],
    }
    if w.min_replicas:
        out["min"] = w.min_replicas
    if w.max_replicas is not None:
        out["max"] = w.max_replicas
    if w.restart is not RestartPolicy.ALWAYS:
        out["restart"] = str(w.restart)
    if w.rules:
        out["rules"] = [_rule(r) for r in w.rules]
    if w.max_per_node is not None:
        out["max_per_node"] = w.max_per_node
    if not w.selector.any:
        nodes: dict[str, Any] = {}
        if w.selector.groups:
            nodes["groups"] = list(w.selector.groups)
        if w.selector.labels:
            nodes["labels"] = dict(w.selector.labels)
        out["nodes"] = nodes
    if w.depends_on:
        out["depends_on"] = list(w.depends_on)
    if w.update != RollingSettings():
        out["update"] = {
            "max_unavailable": w.update.max_unavailable,
            "max_surge": w.update.max_surge,
        }
    if w.scaling is not None:
        out["scaling"] = _scaling(w.scaling)
    return out


def _scaling(p: ScalingPolicy) -> dict[str, Any]:
    """A workload's scaling policy, every field written (documents/export.py writes a node
    group's; importing it here would make a loop: it imports this module)."""
    out: dict[str, Any] = {
        "adjustment_type": str(p.adjustment_type),
        "number": int(p.number) if float(p.number).is_integer() else p.number,
        "cooldown_s": int(p.cooldown_s) if float(p.cooldown_s).is_integer() else p.cooldown_s,
        "strict": p.strict,
    }
    if p.adjustment_type is AdjustmentType.CHANGE_IN_PERCENTAGE:
        out["min_step"] = p.min_step
    return out


def _container(c: Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "image": c.image}
    if c.command:
        out["command"] = list(c.command)
    if c.args:
        out["args"] = list(c.args)
    if c.env:
        out["env"] = {k: source_document(v) for k, v in c.env.items()}
    if c.ports:
        out["ports"] = [
            p.port
            if p.name is None and p.protocol == "tcp"
            else {
                "port": p.port,
                **({"name": p.name} if p.name else {}),
                **({"protocol": p.protocol} if p.protocol != "tcp" else {}),
            }
            for p in c.ports
        ]
    resources: dict[str, Any] = {}
    if c.cpu_milli:
        resources["cpu"] = f"{c.cpu_milli}m"
    if c.memory_mb:
        resources["memory_mb"] = c.memory_mb
    if resources:
        out["resources"] = resources
    if c.liveness is not None:
        out["liveness"] = _probe(c.liveness)
    if c.readiness is not None:
        out["readiness"] = _probe(c.readiness)
    return out


def _probe(p: Probe) -> dict[str, Any]:
    out: dict[str, Any]
    if p.kind is ProbeKind.HTTP:
        out = {"http": p.path, "port": p.port}
    elif p.kind is ProbeKind.TCP:
        out = {"tcp": p.port}
    else:
        out = {"exec": list(p.command)}
    defaults = Probe(p.kind)
    for key in ("period_s", "timeout_s", "initial_delay_s"):
        value = getattr(p, key)
        if value != getattr(defaults, key):
            out[key] = int(value) if float(value).is_integer() else value
    if p.failure_threshold != defaults.failure_threshold:
        out["failure_threshold"] = p.failure_threshold
    return out


def _rule(r: WorkloadRule) -> dict[str, Any]:
    out: dict[str, Any] = {"rule": str(r.rule)}
    if r.scope is not WorkloadScope.NODE:
        out["scope"] = str(r.scope)
    if r.against is not None:
        out["against"] = r.against
    if r.rule is WorkloadRuleKind.ANTI_AFFINITY and r.max_per_domain != 1:
        out["max_per_domain"] = r.max_per_domain
    if r.rule is WorkloadRuleKind.SPREAD and r.max_skew != 1:
        out["max_skew"] = r.max_skew
    return out

"""Bounds every request is checked against before any per-node work: the cluster's size, the
inventory's total capacity, and the project's quotas.

A document can declare a billion replicas in a hundred bytes; everything after validation
(replica choice, placement, planning) builds something per node. So the checks here work from
a node group's count times its unit's demand — O(groups), never O(nodes) — and run on every
path that changes a declared cluster (create, apply, scale, resize, node groups, receivers and
the Senlin façade, which all pass through `ClusterService`). Quotas follow Nova and Senlin:
defaults from settings, per-project overrides stored, -1 meaning unlimited; only growth is
refused, so a project over its quota can always shrink.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand
from shoal.model.problems import Problem
from shoal.service.errors import Forbidden, Invalid, Unplaceable
from shoal.service.footprint import MAX_CLUSTER_NODES, Footprint, pointer
from shoal.service.footprint import check_size as sized
from shoal.store.auth import ADMIN_PROJECT
from shoal.store.quotas import Usage

QUOTA_RESOURCES = ("clusters", "nodes", "vcpus", "ram_mb", "volume_gb")
UNLIMITED = -1
MAX_QUOTA = 2**31 - 1


class QuotaExceeded(Forbidden):
    code = "quota_exceeded"
    title = "Quota exceeded"


@dataclass(frozen=True, slots=True)
class Limits:
    """The operator's bounds (from settings)."""

    max_cluster_nodes: int = MAX_CLUSTER_NODES
    quotas: dict[str, int] = field(default_factory=lambda: dict.fromkeys(QUOTA_RESOURCES, -1))
    """Default limit per resource for projects without an override; -1 is unlimited."""
    receivers_per_cluster: int = 100
    """Receivers (webhooks) one cluster may have."""
    sync_place_max_nodes: int = 1_000
    """A new cluster of at most this many nodes is placed in the request (an unplaceable one is
    a synchronous 409); a larger one is admitted on its size, quotas and the free capacity
    in total, and placed by its create action (issue 23: the request stays O(groups))."""

    def quota_of(self, resource: str, overrides: dict[str, int], project_id: str = "") -> int:
        """The project's limit: its override, else the default. The defaults are finite (a
        tenant cannot fill the server); the operator's own project is not held to them."""
        if resource in overrides:
            return overrides[resource]
        if project_id == ADMIN_PROJECT:
            return UNLIMITED
        return self.quotas.get(resource, UNLIMITED)


def usage_of(fp: Footprint) -> Usage:
    """What a footprint counts against a project's quotas."""
    d = fp.demand
    return Usage(1, fp.nodes, d.vcpus, d.ram_mb, d.volume_gb)


def check_size(spec: ClusterSpec, inventory: Inventory, limits: Limits) -> Footprint:
    """Refuse a cluster larger than the operator allows or than the whole inventory holds."""
    return sized(spec, inventory, limits.max_cluster_nodes)


def check_free(
    spec: ClusterSpec,
    fp: Footprint,
    inventory: Inventory,
    used: dict[str, Demand],
    pending: Demand,
) -> None:
    """Refuse a cluster larger than the free capacity of every host added up (`used`: what
    each host holds; `pending`: what accepted creates reserved on no host yet). The admission of a
    create placed by its action (`sync_place_max_nodes`): O(hosts), where a placement is
    O(nodes); what it lets through and still cannot be placed fails in the action."""
    free = [0, 0, 0, 0]
    for h in inventory.hosts:
        u = used.get(h.name, Demand())
        for i, (cap, held) in enumerate(
            (
                (h.vcpus, u.vcpus),
                (h.ram_mb, u.ram_mb),
                (h.disk_gb, u.disk_gb),
                (h.volume_gb, u.volume_gb),
            )
        ):
            free[i] += max(0, cap - held)
    over = [
        f"{what}: needs {need}, free in the whole inventory {have}"
        for what, need, have in (
            ("vcpus", fp.demand.vcpus, free[0] - pending.vcpus),
            ("ram_mb", fp.demand.ram_mb, free[1] - pending.ram_mb),
            ("disk_gb", fp.demand.disk_gb, free[2] - pending.disk_gb),
            ("volume_gb", fp.demand.volume_gb, free[3] - pending.volume_gb),
        )
        if need > have
    ]
    if over:
        raise Unplaceable(
            f"cluster {spec.name} cannot be placed: " + "; ".join(over),
            [Problem(pointer(fp), m) for m in over],
        )


def check_quota(
    project_id: str,
    limits: Limits,
    overrides: dict[str, int],
    others: Usage,
    current: Usage,
    requested: Usage,
) -> None:
    """Refuse growth past a quota: `others` is what the project holds apart from this cluster,
    `current` what this cluster holds now, `requested` what it would hold."""
    problems: list[dict[str, Any]] = []
    for res in QUOTA_RESOURCES:
        limit = limits.quota_of(res, overrides, project_id)
        want = requested.of(res)
        if limit < 0 or want <= current.of(res):
            continue
        in_use = others.of(res)
        if in_use + want > limit:
            problems.append(
                {
                    "path": "",
                    "message": f"{res}: limit {limit}, in use {in_use}, requested {want}",
                    "resource": res,
                    "limit": limit,
                    "in_use": in_use,
                    "requested": want,
                }
            )
    if problems:
        raise QuotaExceeded(
            f"project {project_id} would exceed its quota: "
            + "; ".join(p["message"] for p in problems),
            problems,
        )


def check_quota_values(body: object) -> dict[str, int]:
    """A quota update (`{"quotas": {resource: limit}}` or the map itself), or a 422."""
    if isinstance(body, dict) and isinstance(body.get("quotas"), dict):
        body = body["quotas"]
    if not isinstance(body, dict) or not body:
        raise Invalid(
            'give the quotas to set, e.g. {"quotas": {"nodes": 100}}',
            [Problem("/quotas", "an object of resource: limit")],
        )
    problems: list[Problem] = []
    out: dict[str, int] = {}
    for k, v in body.items():
        if k not in QUOTA_RESOURCES:
            problems.append(Problem(f"/quotas/{k}", f"one of {', '.join(QUOTA_RESOURCES)}"))
        elif isinstance(v, bool) or not isinstance(v, int) or v < -1 or v > MAX_QUOTA:
            problems.append(
                Problem(f"/quotas/{k}", f"a whole number, -1 (unlimited) to {MAX_QUOTA}")
            )
        else:
            out[str(k)] = v
    if problems:
        raise Invalid(f"the quotas have {len(problems)} problem(s)", problems)
    return out

"""A cluster back to a native document: what the service stores and edits.

Whatever format a cluster arrived in (native or vcluster), Shoal keeps it as one native
document, so node-group operations edit one shape and re-validate it with the same loader.
Profiles are written inline, flavors and images by name.
"""

from __future__ import annotations

from typing import Any

from shoal.model.cluster import ClusterSpec, Grouping, Instance, NodeGroup
from shoal.model.enums import Objective, Rule
from shoal.model.profile import Profile, ServerProfile


def profile_document(p: Profile) -> dict[str, Any]:
    if isinstance(p, ServerProfile):
        out: dict[str, Any] = {"type": "server", "flavor": p.flavor.name, "image": p.image.name}
        if p.metadata:
            out["metadata"] = dict(p.metadata)
        if p.networks:
            out["networks"] = list(p.networks)
    else:
        out = {"type": "volume", "size": p.size_gb}
        if p.volume_type:
            out["volume_type"] = p.volume_type
    if p.zone:
        out["zone"] = p.zone
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
    if spec.instances:
        out["instances"] = [_instance(i) for i in spec.instances]
    if spec.node_groups:
        out["node_groups"] = [node_group_document(g) for g in spec.node_groups]
    if spec.groupings:
        out["groupings"] = [_grouping(g) for g in spec.groupings]
    return out

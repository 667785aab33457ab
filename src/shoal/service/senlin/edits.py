"""Senlin's changes to a cluster, as edits on the cluster service's one path.

The façade translates: a Senlin body becomes typed edits (`service/edits.py`, plus the few
here that only Senlin has: its resize checks in its words, its cluster update, its policy
bindings) and the writes they need as effects (`Rename`, `RecordProfiles`). Nothing here
reads the store; `ClusterService._submit` applies, admits and records them as any other
change.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shoal.service.edits import Applied, Document, GroupWording, Resize, Scene, pick_group
from shoal.service.effects import Effect
from shoal.service.errors import Conflict, OutOfBounds
from shoal.service.resize import Adjustment
from shoal.service.senlin import meta
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.meta import PolicyBinding
from shoal.service.senlin.policies import effect
from shoal.service.senlin.policy_store import checked_of
from shoal.service.senlin.sizes import Bounds, bounds_message, check_size_params, target_of
from shoal.store import senlin_clusters as senlin_cluster_repo
from shoal.store import senlin_nodes as senlin_node_repo
from shoal.store.records import ClusterRecord
from shoal.store.senlin_conn import Conn
from shoal.store.senlin_policies import PolicyRecord

SENLIN = GroupWording(
    ambiguous="Cluster '{cluster}' has {count} node groups; say which one with 'nodegroup'.",
    none="Cluster '{cluster}' has 0 node groups; say which one with 'nodegroup'.",
    missing="The node group '{name}' could not be found.",
    pointer=None,
)
"""Senlin's words for a node group a request does not name well (no pointer: Senlin's
messages are whole sentences)."""


# -- effects ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rename:
    """The cluster's Senlin name, refused when another cluster of the project has it."""

    name: str

    def perform(self, conn: Conn, cluster: ClusterRecord, now: float) -> None:
        if senlin_cluster_repo.name_taken(conn, cluster.project_id, self.name, cluster.id):
            raise Conflict(f"A cluster named '{self.name}' already exists.")
        senlin_cluster_repo.rename(conn, cluster.id, self.name)


@dataclass(frozen=True, slots=True)
class RecordProfiles:
    """Nodes keep showing the Senlin profile they were made from (`profile_id`), unless they
    show one of their own already."""

    node_ids: tuple[str, ...]
    profile_id: str | None

    def perform(self, conn: Conn, cluster: ClusterRecord, now: float) -> None:
        senlin_node_repo.record_profiles(
            conn, cluster.project_id, list(self.node_ids), self.profile_id, only_unset=True
        )


# -- edits ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SenlinResize:
    """Senlin's resize and scale: its size checks first, in its words, then the one resize
    (`edits.Resize`); a size outside the bounds is worded as Senlin words it."""

    adjustment: Adjustment | None
    number: float
    nodegroup: str | None = None
    min_size: int | None = None
    max_size: int | None = None
    min_step: int = 1
    strict: bool = True

    def apply(self, doc: Document, scene: Scene) -> Applied:
        group = pick_group(doc, self.nodegroup, SENLIN)
        current = int(group.get("count", 0))
        was = Bounds(int(group.get("min", 0)), int(group.get("max", -1)), current)
        adj = self.adjustment or Adjustment.CHANGE_IN_CAPACITY
        number = self.number if self.adjustment else 0
        desired = target_of(current, adj, number) if self.adjustment else None
        short = desired is not None and abs(desired - current) < self.min_step
        if adj is Adjustment.CHANGE_IN_PERCENTAGE and number and short:
            desired = current + (self.min_step if number > 0 else -self.min_step)
        problem = check_size_params(was, desired, self.min_size, self.max_size, self.strict)
        if problem:
            raise BadRequest(problem)
        step = Resize(
            adj,
            number,
            group["name"],
            min_step=self.min_step,
            strict=self.strict,
            min_size=self.min_size,
            max_size=self.max_size,
            wording=SENLIN,
        )
        try:
            return step.apply(doc, scene)
        except OutOfBounds as out:
            target = target_of(out.current, adj, number)
            raise BadRequest(bounds_message(target, out.low, out.high)) from None


@dataclass(frozen=True, slots=True)
class UpdateCluster:
    """Senlin's cluster update: its own fields (metadata, timeout, config, profile id), its
    name, and a new profile for the nodes (replaced by Shoal) unless `profile_only`."""

    changes: Mapping[str, Any]
    """`SenlinMeta` fields to set."""
    new_name: str | None = None
    profile: Mapping[str, Any] | None = None
    """The new profile, in the native form; None: unchanged."""
    profile_only: bool = False
    old_profile_id: str | None = None

    def apply(self, doc: Document, scene: Scene) -> Applied:
        m = meta.decode(doc.get("metadata", {}))
        doc["metadata"] = meta.encode(dataclasses.replace(m, **self.changes))
        if self.new_name is not None:
            doc["name"] = self.new_name
        effects: list[Effect] = []
        if self.profile is not None and not self.profile_only:
            # The nodes follow the cluster's profile: the group's replicas and the members
            # made from it (nodes created into the cluster); Shoal replaces them.
            group = pick_group(doc, None, SENLIN)
            old = group.get("profile")
            group.pop("unit", None)
            group["profile"] = copy.deepcopy(dict(self.profile))
            for instance in doc.get("instances", []):
                if instance.get("profile") == old:
                    instance["profile"] = copy.deepcopy(dict(self.profile))
        elif self.profile is not None:
            # Only the cluster's profile changes (Senlin 1.6): its nodes keep showing the one
            # they were made from, and new nodes are still made from that one.
            members = tuple(n.id for n in scene.nodes)
            effects.append(RecordProfiles(members, self.old_profile_id))
        if self.new_name is not None:
            effects.append(Rename(self.new_name))
        return Applied(doc, effects=tuple(effects))


@dataclass(frozen=True, slots=True)
class KeepProfiles:
    """Nodes leaving the cluster keep showing the cluster's profile (no document change)."""

    node_ids: tuple[str, ...]
    profile_id: str | None

    def apply(self, doc: Document, scene: Scene) -> Applied:
        return Applied(doc, effects=(RecordProfiles(self.node_ids, self.profile_id),))


@dataclass(frozen=True, slots=True)
class BindPolicies:
    """The cluster's policy bindings changed from `before` to `after`: the fields written by
    every policy involved are cleared, then the enabled bindings are applied in order."""

    before: Sequence[PolicyBinding]
    after: Sequence[PolicyBinding]
    rows: Mapping[str, PolicyRecord]
    """The policies involved, by id, as stored."""

    def apply(self, doc: Document, scene: Scene) -> Applied:
        groups = doc.get("node_groups", [])
        if len(groups) != 1:
            raise BadRequest(
                f"Policies attach to clusters of one node group; this one has {len(groups)}."
            )
        group = groups[0]
        for b in [*self.before, *self.after]:
            e = effect(checked_of(self.rows[b.policy_id]), group["name"], b.policy_id)
            for key in e.group:
                group.pop(key, None)
            gone = {g["name"] for g in e.groupings}
            doc["groupings"] = [g for g in doc.get("groupings", []) if g["name"] not in gone]
            for key, entries in e.sections():
                names = {x["name"] for x in entries}
                doc[key] = [x for x in doc.get(key, []) if x.get("name") not in names]
        for b in self.after:
            if not b.enabled:
                continue
            e = effect(checked_of(self.rows[b.policy_id]), group["name"], b.policy_id)
            group.update(copy.deepcopy(e.group))
            doc.setdefault("groupings", []).extend(copy.deepcopy(e.groupings))
            for key, entries in e.sections():  # a load balancer (issue 26)
                doc.setdefault(key, []).extend(copy.deepcopy(entries))
        for key in ("groupings", "networks", "load_balancers"):
            if not doc.get(key):
                doc.pop(key, None)
        m = meta.decode(doc.get("metadata", {}))
        doc["metadata"] = meta.encode(dataclasses.replace(m, policies=tuple(self.after)))
        return Applied(doc)

"""Senlin cluster requests as Shoal cluster changes: create, update, delete, cluster actions.

The façade translates: a Senlin body becomes typed edits (`service/edits.py`,
`service/senlin/edits.py`) on the cluster service's one path (lock, validate, dry-run
placement, record the action), so a Senlin request and a native one can never disagree about
a cluster; the result is shown by the Senlin views. Cluster actions run from a table
(`_ACTIONS`); membership actions live in `members.py`, policy bindings in `attach.py`. Size
checks answer 400 with Senlin's wording; a cluster busy with another action (`ClusterBusy`,
whichever check found it) answers Senlin's 409.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from typing import TypeVar

from shoal.model.enums import ActionKind, Health, NodeStatus
from shoal.service.clusters import RECOVERY_METHODS, Asked, ClusterService, Submitted
from shoal.service.edits import Converge, ReplaceDocument
from shoal.service.errors import ClusterBusy, NotFound
from shoal.service.resize import Adjustment
from shoal.service.senlin import meta
from shoal.service.senlin.action_bodies import (
    ActionBody,
    ClusterAction,
    DelNodes,
    LifecycleBody,
    NodeRefs,
    PolicyBody,
    RecoverBody,
    ReplaceNodes,
    ResizeBody,
    ScaleBody,
)
from shoal.service.senlin.attach import SenlinAttach
from shoal.service.senlin.create_body import ClusterCreate, cluster_name
from shoal.service.senlin.edits import SenlinResize, UpdateCluster
from shoal.service.senlin.errors import BadRequest, ClusterLocked
from shoal.service.senlin.members import SenlinMembers
from shoal.service.senlin.policies import ScalingFields, effect, scaling_event
from shoal.service.senlin.policy_store import SenlinPolicies, checked_of
from shoal.service.senlin.profiles import SenlinProfiles
from shoal.service.senlin.requests import as_int, as_map
from shoal.service.senlin.shapes import JsonObject
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.records import Principal

T = TypeVar("T")


class SenlinClusters:
    def __init__(
        self, clusters: ClusterService, profiles: SenlinProfiles, policies: SenlinPolicies
    ) -> None:
        self.svc = clusters
        self.profiles = profiles
        self.policies = policies
        self.db = clusters.db
        self.members = SenlinMembers(clusters, profiles)
        self.attach = SenlinAttach(clusters, policies)

    # -- create, update, delete ---------------------------------------------------------------

    def create(self, who: Principal, body: ClusterCreate) -> Submitted:
        name, profile_ref = body.name, body.profile_ref
        with self.db.reading() as conn:
            try:
                row = self.profiles.row(conn, who, profile_ref)
            except NotFound:
                raise BadRequest(
                    f"The specified profile '{profile_ref}' could not be found."
                ) from None
        group: JsonObject = {
            "name": name,
            "profile": self.profiles.native(row),
            "count": body.desired,
            "min": body.min_size,
        }
        if body.max_size >= 0:
            group["max"] = body.max_size
        extra = meta.SenlinMeta(
            metadata=body.metadata,
            profile_id=row.id,
            timeout=body.timeout,
            config=body.config,
        )
        with self.db.reading() as conn:
            if cluster_repo.get_cluster(conn, name, who.project_id) is not None:
                # Senlin lets names repeat; Shoal's are unique, so this one gets a suffix.
                extra = dataclasses.replace(extra, name=name)
                name = f"{name[:54]}-{uuid.uuid4().hex[:8]}"
                group["name"] = name
        doc = {"name": name, "metadata": meta.encode(extra), "node_groups": [group]}
        first = ReplaceDocument(doc)
        asked = Asked(ActionKind.CLUSTER_CREATE, source_format="senlin")
        return self.svc.submit(who, None, [first], asked)

    def update(self, who: Principal, ref: str, data: JsonObject) -> Submitted:
        known = {"name", "metadata", "profile_id", "timeout", "config", "profile_only"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BadRequest(f"Unrecognized cluster property '{unknown[0]}'.")
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            new_profile = None
            if data.get("profile_id") is not None:
                pref = str(data["profile_id"])
                try:
                    new_profile = self.profiles.row(conn, who, pref)
                except NotFound:
                    raise BadRequest(
                        f"The specified profile '{pref}' could not be found."
                    ) from None
                mine = meta.decode(cluster.document.get("metadata", {})).profile_id
                if new_profile.stored_type != self.members.profile_type(conn, who, mine):
                    raise BadRequest(
                        "Cannot update a cluster to a different profile type, operation aborted."
                    )
        current = meta.decode(cluster.document.get("metadata", {}))
        new_name = (
            cluster_name(data["name"]) if data.get("name") not in (None, cluster.name) else None
        )
        changes: JsonObject = {}
        if data.get("metadata") is not None:
            changes["metadata"] = as_map("metadata", data["metadata"])
        if data.get("timeout") is not None:
            changes["timeout"] = as_int("timeout", data["timeout"])
        if data.get("config") is not None:
            changes["config"] = as_map("config", data["config"])
        if new_profile is not None and new_profile.id != current.profile_id:
            changes["profile_id"] = new_profile.id
        if new_name is None and not changes:
            raise BadRequest("No property needs an update.")
        native = (
            self.profiles.native(new_profile) if "profile_id" in changes and new_profile else None
        )

        change = UpdateCluster(
            changes,
            new_name,
            native,
            bool(data.get("profile_only")),
            current.profile_id,
        )
        said = {"name": new_name, **{k: v for k, v in changes.items() if k != "metadata"}}
        return self.svc.submit(who, cluster.id, [change], Asked(ActionKind.CLUSTER_UPDATE, said))

    def delete(self, who: Principal, ref: str) -> Submitted:
        return self.svc.delete(who, ref)

    # -- cluster actions ----------------------------------------------------------------------

    def act(self, who: Principal, ref: str, action: ClusterAction) -> Submitted:
        """Run a checked cluster action (`parse_action`) on the cluster `ref`, by the table of
        actions; a cluster busy with another action is Senlin's 409 naming the action refused."""
        try:
            return _ACTIONS[action.name](self, who, ref, action.body)
        except ClusterBusy:
            raise ClusterLocked(
                f"CLUSTER_{action.name.upper()} for cluster '{ref}' cannot be completed "
                "because it is already locked."
            ) from None

    def scale(self, who: Principal, ref: str, out: bool, body: ScaleBody) -> Submitted:
        """By `count`; without one, by the attached scaling policy for this direction (as
        Senlin did), or by one node."""
        kind = ActionKind.CLUSTER_SCALE_OUT if out else ActionKind.CLUSTER_SCALE_IN
        group = body.nodegroup
        policy = self._scaling_policy(who, ref, kind) if body.count is None else None
        if policy is not None:
            adjustment = Adjustment(policy["adjustment_type"])
            number = float(policy["number"])
            if adjustment is not Adjustment.EXACT_CAPACITY and not out:
                number = -number
            step = int(policy.get("min_step", 1))
            change = SenlinResize(
                adjustment, number, group, min_step=step, strict=bool(policy["strict"])
            )
            return self._resize(who, ref, kind, change, {"policy": policy})
        count = 1 if body.count is None else body.count
        if count == 0:
            verb = "scale-out" if out else "scale-in"
            raise BadRequest(f"Count for {verb} request cannot be 0.")
        change = SenlinResize(Adjustment.CHANGE_IN_CAPACITY, count if out else -count, group)
        return self._resize(who, ref, kind, change, {"count": count})

    def _scaling_policy(self, who: Principal, ref: str, kind: ActionKind) -> ScalingFields | None:
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            for b in meta.decode(cluster.document.get("metadata", {})).policies:
                if not b.enabled:
                    continue
                try:
                    checked = checked_of(self.policies.row(conn, who, b.policy_id))
                except NotFound:
                    continue
                if scaling_event(checked) == str(kind):
                    return effect(checked, "", b.policy_id).group.get("scaling")
        return None

    def resize(self, who: Principal, ref: str, body: ResizeBody) -> Submitted:
        change = SenlinResize(
            body.adjustment_type,
            0.0 if body.number is None else body.number,
            body.nodegroup,
            min_size=body.min_size,
            max_size=body.max_size,
            min_step=body.min_step or 1,
            strict=True if body.strict is None else body.strict,
        )
        said = {
            "adjustment_type": str(body.adjustment_type) if body.adjustment_type else None,
            "number": change.number,
            "min_size": change.min_size,
            "max_size": change.max_size,
            "min_step": change.min_step,
            "strict": change.strict,
        }
        return self._resize(who, ref, ActionKind.CLUSTER_RESIZE, change, said)

    def _resize(
        self,
        who: Principal,
        ref: str,
        kind: ActionKind,
        change: SenlinResize,
        said: Mapping[str, object],
    ) -> Submitted:
        group = change.nodegroup
        return self.svc.submit(who, ref, [change], Asked(kind, {**said, "nodegroup": group}))

    def recover(self, who: Principal, ref: str, body: RecoverBody) -> Submitted:
        operation = body.operation
        how: str | None = None
        if operation is not None:
            how = str(operation).lower()
            if how not in RECOVERY_METHODS:
                raise BadRequest(
                    f"Invalid value '{operation}' specified for 'operation'; one of "
                    + ", ".join(m.upper() for m in RECOVERY_METHODS)
                )
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            nodes = node_repo.list_nodes(conn, cluster.id)
        if not any(n.status is NodeStatus.ERROR or n.health == Health.UNHEALTHY for n in nodes):
            return self.noop(who, cluster.id, "CLUSTER_RECOVER")
        return self.svc.recover(who, cluster.id, None, how)

    def noop(self, who: Principal, ref: str, senlin_action: str) -> Submitted:
        """An action that converges the cluster on what it declares and changes nothing else
        (Senlin's check; a recover with nothing to repair)."""
        said = {"repairs": [], SENLIN_ACTION: senlin_action}
        return self.svc.submit(who, ref, [Converge()], Asked(ActionKind.CLUSTER_RECOVER, said))


Act = Callable[[SenlinClusters, Principal, str, ActionBody], Submitted]
"""Runs one action; its body is the type `parse_action` made for that name (`_ACTIONS` and
`action_bodies._PARSERS` are keyed alike, `_typed` checks the pairing at run time)."""


def _typed(want: type[T], run: Callable[[SenlinClusters, Principal, str, T], Submitted]) -> Act:
    def act(s: SenlinClusters, who: Principal, ref: str, body: ActionBody) -> Submitted:
        if not isinstance(body, want):
            raise TypeError(f"{type(body).__name__} is not a {want.__name__}")
        return run(s, who, ref, body)

    return act


_ACTIONS: dict[str, Act] = {
    "scale_out": _typed(ScaleBody, lambda s, who, ref, b: s.scale(who, ref, True, b)),
    "scale_in": _typed(ScaleBody, lambda s, who, ref, b: s.scale(who, ref, False, b)),
    "resize": _typed(ResizeBody, lambda s, who, ref, b: s.resize(who, ref, b)),
    "add_nodes": _typed(NodeRefs, lambda s, who, ref, b: s.members.add_nodes(who, ref, b.nodes)),
    "del_nodes": _typed(
        DelNodes,
        lambda s, who, ref, b: s.members.del_nodes(
            who, ref, list(b.nodes), b.destroy_after_deletion
        ),
    ),
    "replace_nodes": _typed(
        ReplaceNodes, lambda s, who, ref, b: s.members.replace_nodes(who, ref, dict(b.pairs))
    ),
    "check": _typed(RecoverBody, lambda s, who, ref, b: s.noop(who, ref, "CLUSTER_CHECK")),
    "recover": _typed(RecoverBody, lambda s, who, ref, b: s.recover(who, ref, b)),
    "complete_lifecycle": _typed(
        LifecycleBody, lambda s, who, ref, b: s.noop(who, ref, "CLUSTER_COMPLETE_LIFECYCLE")
    ),
    "policy_attach": _typed(PolicyBody, lambda s, who, ref, b: s.attach.attach(who, ref, b)),
    "policy_detach": _typed(PolicyBody, lambda s, who, ref, b: s.attach.detach(who, ref, b)),
    "policy_update": _typed(PolicyBody, lambda s, who, ref, b: s.attach.update(who, ref, b)),
}
"""Senlin's cluster actions (`parse_action` admits only these names), each to what runs it."""

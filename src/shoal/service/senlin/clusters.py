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
from collections.abc import Callable
from typing import Any

from shoal.documents.names import NAME_RULE, is_name
from shoal.model.enums import ActionKind, Health, NodeStatus
from shoal.service.clusters import RECOVERY_METHODS, Asked, ClusterService, Submitted
from shoal.service.edits import Converge, ReplaceDocument
from shoal.service.errors import ClusterBusy, NotFound
from shoal.service.resize import Adjustment
from shoal.service.senlin import meta
from shoal.service.senlin.action_bodies import ClusterAction, bounded
from shoal.service.senlin.attach import SenlinAttach
from shoal.service.senlin.bodies import integer
from shoal.service.senlin.edits import SenlinResize, UpdateCluster
from shoal.service.senlin.errors import BadRequest, ClusterLocked
from shoal.service.senlin.members import SenlinMembers
from shoal.service.senlin.policies import effect, scaling_event
from shoal.service.senlin.policy_store import SenlinPolicies, checked_of
from shoal.service.senlin.profiles import SenlinProfiles
from shoal.service.senlin.requests import as_int, as_map
from shoal.service.senlin.sizes import check_size_params
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.records import Principal


def _name(value: object) -> str:
    if not isinstance(value, str) or not is_name(value):
        raise BadRequest(f"Invalid cluster name '{value}': {NAME_RULE}.")
    return value


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

    def create(self, who: Principal, data: dict[str, Any]) -> Submitted:
        name = _name(data["name"])
        profile_ref = str(data["profile_id"])

        def sized(key: str, minimum: int) -> int | None:
            if data.get(key) is None:
                return None
            return bounded(key, integer(key, data[key], minimum=minimum))

        min_size, max_size = sized("min_size", 0), sized("max_size", -1)
        desired = sized("desired_capacity", 0)
        timeout = sized("timeout", 0)
        problem = check_size_params(None, desired, min_size, max_size, True)
        if problem:
            raise BadRequest(problem)
        min_size = min_size or 0
        max_size = -1 if max_size is None else max_size
        desired = min_size if desired is None else desired
        timeout = meta.DEFAULT_TIMEOUT if timeout is None else timeout
        with self.db.reading() as conn:
            try:
                row = self.profiles.row(conn, who, profile_ref)
            except NotFound:
                raise BadRequest(
                    f"The specified profile '{profile_ref}' could not be found."
                ) from None
        group: dict[str, Any] = {
            "name": name,
            "profile": self.profiles.native(row),
            "count": desired,
            "min": min_size,
        }
        if max_size >= 0:
            group["max"] = max_size
        extra = meta.SenlinMeta(
            metadata=as_map("metadata", data.get("metadata")),
            profile_id=row["id"],
            timeout=timeout,
            config=as_map("config", data.get("config")),
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

    def update(self, who: Principal, ref: str, data: dict[str, Any]) -> Submitted:
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
                if new_profile["type"] != self.members.profile_type(conn, who, mine):
                    raise BadRequest(
                        "Cannot update a cluster to a different profile type, operation aborted."
                    )
        current = meta.decode(cluster.document.get("metadata", {}))
        new_name = _name(data["name"]) if data.get("name") not in (None, cluster.name) else None
        changes: dict[str, Any] = {}
        if data.get("metadata") is not None:
            changes["metadata"] = as_map("metadata", data["metadata"])
        if data.get("timeout") is not None:
            changes["timeout"] = as_int("timeout", data["timeout"])
        if data.get("config") is not None:
            changes["config"] = as_map("config", data["config"])
        if new_profile is not None and new_profile["id"] != current.profile_id:
            changes["profile_id"] = new_profile["id"]
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
            return _ACTIONS[action.name](self, who, ref, action.params)
        except ClusterBusy:
            raise ClusterLocked(
                f"CLUSTER_{action.name.upper()} for cluster '{ref}' cannot be completed "
                "because it is already locked."
            ) from None

    def scale(self, who: Principal, ref: str, out: bool, params: dict[str, Any]) -> Submitted:
        """By `count`; without one, by the attached scaling policy for this direction (as
        Senlin did), or by one node."""
        kind = ActionKind.CLUSTER_SCALE_OUT if out else ActionKind.CLUSTER_SCALE_IN
        raw = params.get("count")
        group = params.get("nodegroup")
        policy = self._scaling_policy(who, ref, kind) if raw is None else None
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
        count = 1 if raw is None else int(raw)
        if count == 0:
            verb = "scale-out" if out else "scale-in"
            raise BadRequest(f"Count for {verb} request cannot be 0.")
        change = SenlinResize(Adjustment.CHANGE_IN_CAPACITY, count if out else -count, group)
        return self._resize(who, ref, kind, change, {"count": count})

    def _scaling_policy(self, who: Principal, ref: str, kind: ActionKind) -> dict[str, Any] | None:
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            for b in meta.decode(cluster.document.get("metadata", {})).policies:
                if not b.get("enabled", True):
                    continue
                try:
                    checked = checked_of(self.policies.row(conn, who, b["policy_id"]))
                except NotFound:
                    continue
                if scaling_event(checked) == str(kind):
                    found: dict[str, Any] = effect(checked, "", b["policy_id"]).group["scaling"]
                    return found
        return None

    def resize(self, who: Principal, ref: str, params: dict[str, Any]) -> Submitted:
        adjustment: Adjustment | None = params.get("adjustment_type")
        change = SenlinResize(
            adjustment,
            float(params.get("number", 0)),
            params.get("nodegroup"),
            min_size=params.get("min_size"),
            max_size=params.get("max_size"),
            min_step=int(params.get("min_step", 1)) or 1,
            strict=bool(params.get("strict", True)),
        )
        said = {
            "adjustment_type": str(adjustment) if adjustment else None,
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
        said: dict[str, Any],
    ) -> Submitted:
        group = str(change.nodegroup) if change.nodegroup is not None else None
        change = dataclasses.replace(change, nodegroup=group)
        return self.svc.submit(who, ref, [change], Asked(kind, dict(said, nodegroup=group)))

    def recover(self, who: Principal, ref: str, params: dict[str, Any]) -> Submitted:
        operation = params.get("operation")
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


Act = Callable[[SenlinClusters, Principal, str, dict[str, Any]], Submitted]


_ACTIONS: dict[str, Act] = {
    "scale_out": lambda s, who, ref, p: s.scale(who, ref, True, p),
    "scale_in": lambda s, who, ref, p: s.scale(who, ref, False, p),
    "resize": lambda s, who, ref, p: s.resize(who, ref, p),
    "add_nodes": lambda s, who, ref, p: s.members.add_nodes(who, ref, p),
    "del_nodes": lambda s, who, ref, p: s.members.del_nodes(
        who, ref, p["nodes"], bool(p.get("destroy_after_deletion"))
    ),
    "replace_nodes": lambda s, who, ref, p: s.members.replace_nodes(who, ref, p["nodes"]),
    "check": lambda s, who, ref, p: s.noop(who, ref, "CLUSTER_CHECK"),
    "recover": lambda s, who, ref, p: s.recover(who, ref, p),
    "complete_lifecycle": lambda s, who, ref, p: s.noop(who, ref, "CLUSTER_COMPLETE_LIFECYCLE"),
    "policy_attach": lambda s, who, ref, p: s.attach.attach(who, ref, p),
    "policy_detach": lambda s, who, ref, p: s.attach.detach(who, ref, p),
    "policy_update": lambda s, who, ref, p: s.attach.update(who, ref, p),
}
"""Senlin's cluster actions (`parse_action` admits only these names), each to what runs it."""

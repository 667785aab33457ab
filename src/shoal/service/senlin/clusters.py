"""Senlin cluster requests as Shoal cluster changes: create, update, delete, cluster actions.

Every change takes the cluster service's one path (lock, validate, dry-run placement, record
the action), so a Senlin request and a native one can never disagree about a cluster. Size
checks answer 400 with Senlin's wording; a cluster busy with another action answers 409.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import Connection, select, update

from shoal.model.enums import ActionKind, Health, NodeStatus
from shoal.service.clusters import RECOVERY_METHODS, ClusterService, Submitted
from shoal.service.errors import Conflict, NotFound
from shoal.service.resize import Adjustment, new_count
from shoal.service.senlin import meta
from shoal.service.senlin.attach import SenlinAttach
from shoal.service.senlin.errors import BadRequest, FeatureNotSupported, NodeNotOrphan
from shoal.service.senlin.nodes import find_node
from shoal.service.senlin.policies import effect, scaling_event
from shoal.service.senlin.policy_store import SenlinPolicies, checked_of
from shoal.service.senlin.profiles import SenlinProfiles, native_of
from shoal.service.senlin.requests import as_bool, as_int, as_map, as_number
from shoal.service.senlin.sizes import bounds_message, target_of
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.spec.names import NAME_RULE, is_name
from shoal.store import nodes as node_repo
from shoal.store.records import ClusterRecord, NodeRecord, Principal
from shoal.store.tables import clusters as clusters_table

ACTIONS = (
    "scale_out",
    "scale_in",
    "resize",
    "add_nodes",
    "del_nodes",
    "check",
    "recover",
    "replace_nodes",
    "policy_attach",
    "policy_detach",
    "policy_update",
)


def _name(value: object) -> str:
    if not isinstance(value, str) or not is_name(value):
        raise BadRequest(f"Invalid cluster name '{value}': {NAME_RULE}.")
    return value


def _group(doc: dict[str, Any], nodegroup: str | None = None) -> dict[str, Any]:
    groups: list[dict[str, Any]] = doc.get("node_groups", [])
    if nodegroup is not None:
        for g in groups:
            if g["name"] == nodegroup:
                return g
        raise NotFound(f"The node group '{nodegroup}' could not be found.")
    if len(groups) != 1:
        raise BadRequest(
            f"Cluster '{doc.get('name')}' has {len(groups)} node groups; "
            "say which one with 'nodegroup'."
        )
    return groups[0]


class SenlinClusters:
    def __init__(
        self, clusters: ClusterService, profiles: SenlinProfiles, policies: SenlinPolicies
    ) -> None:
        self.svc = clusters
        self.profiles = profiles
        self.policies = policies
        self.db = clusters.db

    # -- create, update, delete ---------------------------------------------------------------

    def create(self, who: Principal, data: dict[str, Any]) -> Submitted:
        if data.get("name") is None:
            raise BadRequest("No cluster name specified.")
        name = _name(data["name"])
        profile_ref = data.get("profile_id")
        if not isinstance(profile_ref, str) or not profile_ref:
            raise BadRequest("No cluster profile provided.")
        min_size = as_int("min_size", data["min_size"]) if data.get("min_size") is not None else 0
        max_size = (
            as_int("max_size", data["max_size"], allow_negative=True)
            if data.get("max_size") is not None
            else -1
        )
        desired = (
            as_int("desired_capacity", data["desired_capacity"])
            if data.get("desired_capacity") is not None
            else min_size
        )
        timeout = (
            as_int("timeout", data["timeout"])
            if data.get("timeout") is not None
            else meta.DEFAULT_TIMEOUT
        )
        if min_size > desired:
            raise BadRequest(
                "Cluster min_size, if specified, must be less than or equal to its desired "
                "capacity."
            )
        if 0 <= max_size < desired:
            raise BadRequest(
                "Cluster max_size, if specified, must be greater than or equal to its desired "
                "capacity. Setting max_size to -1 means no upper limit on cluster size."
            )
        with self.db.reading() as conn:
            try:
                row = self.profiles.row(conn, who, profile_ref)
            except NotFound:
                raise BadRequest(
                    f"The specified profile '{profile_ref}' could not be found."
                ) from None
        group: dict[str, Any] = {
            "name": name,
            "profile": native_of(row),
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
        doc = {"name": name, "metadata": meta.encode(extra), "node_groups": [group]}
        return self.svc.create_spec(who, self.svc.spec_of(doc), "senlin")

    def update(self, who: Principal, ref: str, data: dict[str, Any]) -> Submitted:
        known = {"name", "metadata", "profile_id", "timeout", "config", "profile_only"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BadRequest(f"Unrecognized cluster property '{unknown[0]}'.")
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            new_profile = None
            if data.get("profile_id") is not None:
                new_profile = self.profiles.row(conn, who, str(data["profile_id"]))
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
        native = native_of(new_profile) if "profile_id" in changes and new_profile else None

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            m = meta.decode(doc.get("metadata", {}))
            doc["metadata"] = meta.encode(dataclasses.replace(m, **changes))
            if new_name is not None:
                doc["name"] = new_name
            if native is not None:
                group = _group(doc)
                group.pop("unit", None)
                group["profile"] = native
            return doc

        def rename(conn: Connection, c: ClusterRecord, _now: float) -> None:
            if new_name is None:
                return
            t = clusters_table
            taken = conn.execute(
                select(t.c.id).where(
                    t.c.project_id == c.project_id,
                    t.c.name == new_name,
                    t.c.deleted_at.is_(None),
                    t.c.id != c.id,
                )
            ).first()
            if taken is not None:
                raise Conflict(f"A cluster named '{new_name}' already exists.")
            conn.execute(update(t).where(t.c.id == c.id).values(name=new_name))

        inputs = {"name": new_name, **{k: v for k, v in changes.items() if k != "metadata"}}
        return self.svc.submit(
            who, cluster.id, ActionKind.CLUSTER_UPDATE, mutate, inputs, within=rename
        )

    def delete(self, who: Principal, ref: str) -> Submitted:
        return self.svc.delete(who, ref)

    # -- cluster actions ----------------------------------------------------------------------

    def act(self, who: Principal, ref: str, body: object) -> Submitted:
        if not isinstance(body, dict) or not body:
            raise BadRequest("No action specified")
        if len(body) > 1:
            raise BadRequest("Multiple actions specified")
        name, params = next(iter(body.items()))
        if name not in ACTIONS:
            raise BadRequest(f"Unrecognized action '{name}' specified")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise BadRequest(f"The parameters of action '{name}' must be a map.")
        if name in ("scale_out", "scale_in"):
            return self.scale(who, ref, name == "scale_out", params)
        if name == "resize":
            return self.resize(who, ref, params)
        if name == "add_nodes":
            return self.add_nodes(who, ref, params)
        if name == "del_nodes":
            nodes = params.get("nodes")
            if not isinstance(nodes, list) or not nodes:
                raise BadRequest("No node to delete")
            return self.svc.del_nodes(who, ref, [str(n) for n in nodes])
        if name == "check":
            return self.noop(who, ref, "CLUSTER_CHECK")
        if name == "recover":
            return self.recover(who, ref, params)
        if name == "replace_nodes":
            raise FeatureNotSupported(
                "replace_nodes needs orphan nodes, which Shoal does not have; "
                "use recover with operation REPLACE"
            )
        attach = SenlinAttach(self.svc, self.policies)
        if name == "policy_attach":
            return attach.attach(who, ref, params)
        if name == "policy_detach":
            return attach.detach(who, ref, params)
        return attach.update(who, ref, params)

    def scale(self, who: Principal, ref: str, out: bool, params: dict[str, Any]) -> Submitted:
        """By `count`; without one, by the attached scaling policy for this direction (as
        Senlin did), or by one node."""
        kind = ActionKind.CLUSTER_SCALE_OUT if out else ActionKind.CLUSTER_SCALE_IN
        raw = params.get("count")
        policy = self._scaling_policy(who, ref, kind) if raw is None else None
        if policy is not None:
            adjustment = Adjustment(policy["adjustment_type"])
            number = float(policy["number"])
            if adjustment is not Adjustment.EXACT_CAPACITY and not out:
                number = -number
            return self._resize(
                who,
                ref,
                kind,
                adjustment,
                number,
                min_step=int(policy.get("min_step", 1)),
                strict=bool(policy["strict"]),
                nodegroup=params.get("nodegroup"),
                inputs={"policy": policy},
            )
        count = 1 if raw is None else as_int("count", raw, allow_zero=False)
        return self._resize(
            who,
            ref,
            kind,
            Adjustment.CHANGE_IN_CAPACITY,
            count if out else -count,
            nodegroup=params.get("nodegroup"),
            inputs={"count": count},
        )

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
        raw_type, raw_number = params.get("adjustment_type"), params.get("number")
        adjustment: Adjustment | None = None
        number = 0.0
        if raw_type is not None:
            if raw_type not in set(Adjustment):
                raise BadRequest(f"Invalid value '{raw_type}' specified for 'adjustment_type'")
            adjustment = Adjustment(str(raw_type))
            if raw_number is None:
                raise BadRequest("Missing number value for resize operation.")
        if raw_number is not None:
            if adjustment is None:
                raise BadRequest("Missing adjustment_type value for resize operation.")
            if adjustment is Adjustment.CHANGE_IN_PERCENTAGE:
                number = as_number("number", raw_number)
            else:
                number = as_int("number", raw_number, allow_negative=True)
        min_size = (
            as_int("min_size", params["min_size"]) if params.get("min_size") is not None else None
        )
        max_size = (
            as_int("max_size", params["max_size"], allow_negative=True)
            if params.get("max_size") is not None
            else None
        )
        if min_size is not None and max_size is not None and 0 <= max_size < min_size:
            raise BadRequest(
                f"The specified min_size ({min_size}) is greater than the specified "
                f"max_size ({max_size})."
            )
        min_step = (
            as_int("min_step", params["min_step"], allow_zero=False)
            if params.get("min_step") is not None
            else 1
        )
        strict = as_bool("strict", params["strict"]) if params.get("strict") is not None else True
        return self._resize(
            who,
            ref,
            ActionKind.CLUSTER_RESIZE,
            adjustment,
            number,
            min_size=min_size,
            max_size=max_size,
            min_step=min_step,
            strict=strict,
            nodegroup=params.get("nodegroup"),
            inputs={
                "adjustment_type": str(adjustment) if adjustment else None,
                "number": number,
                "min_size": min_size,
                "max_size": max_size,
                "min_step": min_step,
                "strict": strict,
            },
        )

    def _resize(
        self,
        who: Principal,
        ref: str,
        kind: ActionKind,
        adjustment: Adjustment | None,
        number: float,
        *,
        min_size: int | None = None,
        max_size: int | None = None,
        min_step: int = 1,
        strict: bool = True,
        nodegroup: object = None,
        inputs: dict[str, Any],
    ) -> Submitted:
        group_name = str(nodegroup) if nodegroup is not None else None

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            group = _group(doc, group_name)
            if min_size is not None:
                group["min"] = min_size
            if max_size is not None:
                if max_size < 0:
                    group.pop("max", None)
                else:
                    group["max"] = max_size
            low, high = int(group.get("min", 0)), group.get("max")
            if high is not None and low > int(high):
                raise BadRequest(
                    f"The specified min_size ({low}) is greater than the current max_size "
                    f"({high}) of the cluster."
                )
            current = int(group.get("count", 0))
            adj = adjustment or Adjustment.CHANGE_IN_CAPACITY
            try:
                group["count"] = new_count(
                    current,
                    adj,
                    number if adjustment else 0,
                    min_size=low,
                    max_size=None if high is None else int(high),
                    min_step=min_step,
                    strict=strict,
                )
            except Conflict:
                target = target_of(current, adj, number if adjustment else 0)
                raise BadRequest(bounds_message(target, low, high)) from None
            return doc

        return self.svc.submit(who, ref, kind, mutate, dict(inputs, nodegroup=group_name))

    def add_nodes(self, who: Principal, ref: str, params: dict[str, Any]) -> Submitted:
        """Senlin adopts orphan nodes; Shoal has none, so each name is a new node of the
        cluster's profile (an instance in the document). A mapping may name a profile."""
        items = params.get("nodes")
        if not isinstance(items, list) or not items:
            raise BadRequest("No node to add")
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            taken = {n.name for n in node_repo.list_nodes(conn, cluster.id)}
            base = _group(cluster.document).get("profile")
            instances: list[dict[str, Any]] = []
            for item in items:
                if isinstance(item, str):
                    item = {"name": item}
                if not isinstance(item, dict):
                    raise BadRequest("Each node to add is a name or a map with a name.")
                name = item.get("name")
                if not isinstance(name, str) or not is_name(name):
                    raise BadRequest(f"Invalid node name '{name}': {NAME_RULE}.")
                if name in taken:
                    raise NodeNotOrphan(f"Nodes ['{name}'] already owned by some cluster.")
                profile: object = item.get("profile") or item.get("profile_id") or base
                if isinstance(profile, str):
                    profile = native_of(self.profiles.row(conn, who, profile))
                if not isinstance(profile, dict):
                    raise BadRequest(f"Node '{name}' needs a profile.")
                instance: dict[str, Any] = {"name": name, "profile": profile}
                if item.get("zone"):
                    instance["zone"] = item["zone"]
                instances.append(instance)
        return self.svc.add_nodes(who, cluster.id, instances)

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

        def same(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return doc

        inputs = {"repairs": [], SENLIN_ACTION: senlin_action}
        return self.svc.submit(who, ref, ActionKind.CLUSTER_RECOVER, same, inputs)

    # -- nodes --------------------------------------------------------------------------------

    def delete_node(self, who: Principal, ref: str) -> Submitted:
        """A member node deleted: the cluster shrinks by it (Senlin lowers desired capacity)."""
        with self.db.reading() as conn:
            node = find_node(conn, who, ref)
        return self.svc.del_nodes(who, node.cluster_id, [node.id])

"""Senlin cluster requests as Shoal cluster changes: create, update, delete, cluster actions.

Every change takes the cluster service's one path (lock, validate, dry-run placement, record
the action), so a Senlin request and a native one can never disagree about a cluster. Size
checks answer 400 with Senlin's wording; a cluster busy with another action answers 409.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid
from typing import Any

from shoal.model.enums import ActionKind, Health, NodeStatus
from shoal.service.clusters import RECOVERY_METHODS, ClusterService, Submitted
from shoal.service.errors import Conflict, NotFound
from shoal.service.resize import Adjustment, new_count
from shoal.service.senlin import meta
from shoal.service.senlin.action_bodies import ClusterAction, bounded
from shoal.service.senlin.attach import SenlinAttach
from shoal.service.senlin.bodies import integer
from shoal.service.senlin.errors import BadRequest, ClusterLocked, FeatureNotSupported
from shoal.service.senlin.nodes import find_node
from shoal.service.senlin.policies import effect, scaling_event
from shoal.service.senlin.policy_store import SenlinPolicies, checked_of
from shoal.service.senlin.profiles import SenlinProfiles
from shoal.service.senlin.requests import as_int, as_map
from shoal.service.senlin.sizes import Bounds, bounds_message, check_size_params, target_of
from shoal.service.senlin.views import SENLIN_ACTION, cluster_view
from shoal.spec.names import NAME_RULE, is_name
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import senlin_clusters as senlin_cluster_repo
from shoal.store import senlin_nodes as senlin_node_repo
from shoal.store.records import ClusterRecord, NodeRecord, Principal
from shoal.store.senlin_conn import Conn

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
                pref = str(data["profile_id"])
                try:
                    new_profile = self.profiles.row(conn, who, pref)
                except NotFound:
                    raise BadRequest(
                        f"The specified profile '{pref}' could not be found."
                    ) from None
                mine = meta.decode(cluster.document.get("metadata", {})).profile_id
                if new_profile["type"] != self._profile_type(conn, who, mine):
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
        profile_only = bool(data.get("profile_only"))
        native = (
            self.profiles.native(new_profile) if "profile_id" in changes and new_profile else None
        )

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            m = meta.decode(doc.get("metadata", {}))
            doc["metadata"] = meta.encode(dataclasses.replace(m, **changes))
            if new_name is not None:
                doc["name"] = new_name
            if native is not None and not profile_only:
                # The nodes follow the cluster's profile: the group's replicas and the members
                # made from it (nodes created into the cluster); Shoal replaces them.
                group = _group(doc)
                old = group.get("profile")
                group.pop("unit", None)
                group["profile"] = native
                for instance in doc.get("instances", []):
                    if instance.get("profile") == old:
                        instance["profile"] = copy.deepcopy(native)
            return doc

        def within(conn: Conn, c: ClusterRecord, _now: float) -> None:
            if native is not None and profile_only:
                # Only the cluster's profile changes (Senlin 1.6): its nodes keep showing the
                # one they were made from, and new nodes are still made from that one.
                members = [n.id for n in node_repo.list_nodes(conn, c.id)]
                senlin_node_repo.record_profiles(
                    conn, c.project_id, members, current.profile_id, only_unset=True
                )
            if new_name is None:
                return
            if senlin_cluster_repo.name_taken(conn, c.project_id, new_name, c.id):
                raise Conflict(f"A cluster named '{new_name}' already exists.")
            senlin_cluster_repo.rename(conn, c.id, new_name)

        inputs = {"name": new_name, **{k: v for k, v in changes.items() if k != "metadata"}}
        return self.svc.submit(
            who, cluster.id, ActionKind.CLUSTER_UPDATE, mutate, inputs, within=within
        )

    def delete(self, who: Principal, ref: str) -> Submitted:
        return self.svc.delete(who, ref)

    # -- cluster actions ----------------------------------------------------------------------

    def act(self, who: Principal, ref: str, action: ClusterAction) -> Submitted:
        """Run a checked cluster action (`parse_action`) on the cluster `ref`; a cluster busy
        with another action is Senlin's 409 naming the action refused."""
        try:
            return self._act(who, ref, action)
        except Conflict as busy:
            if not any(str(d.get("message", "")).startswith("locked by") for d in busy.details):
                raise
            raise ClusterLocked(
                f"CLUSTER_{action.name.upper()} for cluster '{ref}' cannot be completed "
                "because it is already locked."
            ) from None

    def _act(self, who: Principal, ref: str, action: ClusterAction) -> Submitted:
        name, params = action.name, action.params
        if name in ("scale_out", "scale_in"):
            return self.scale(who, ref, name == "scale_out", params)
        if name == "resize":
            return self.resize(who, ref, params)
        if name == "add_nodes":
            return self.add_nodes(who, ref, params)
        if name == "del_nodes":
            return self.del_nodes(
                who, ref, params["nodes"], bool(params.get("destroy_after_deletion"))
            )
        if name == "check":
            return self.noop(who, ref, "CLUSTER_CHECK")
        if name == "recover":
            return self.recover(who, ref, params)
        if name == "replace_nodes":
            return self.replace_nodes(who, ref, params["nodes"])
        if name == "complete_lifecycle":
            return self.noop(who, ref, "CLUSTER_COMPLETE_LIFECYCLE")
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
        count = 1 if raw is None else int(raw)
        if count == 0:
            verb = "scale-out" if out else "scale-in"
            raise BadRequest(f"Count for {verb} request cannot be 0.")
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
        adjustment: Adjustment | None = params.get("adjustment_type")
        number = float(params.get("number", 0))
        min_size, max_size = params.get("min_size"), params.get("max_size")
        min_step = int(params.get("min_step", 1)) or 1
        strict = bool(params.get("strict", True))
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
            current = int(group.get("count", 0))
            was = Bounds(int(group.get("min", 0)), int(group.get("max", -1)), current)
            adj = adjustment or Adjustment.CHANGE_IN_CAPACITY
            desired = target_of(current, adj, number) if adjustment else None
            if adjustment is Adjustment.CHANGE_IN_PERCENTAGE and desired is not None:
                step = abs(desired - current)
                if number and step < min_step:
                    desired = current + (min_step if number > 0 else -min_step)
            problem = check_size_params(was, desired, min_size, max_size, strict)
            if problem:
                raise BadRequest(problem)
            if min_size is not None:
                group["min"] = min_size
            if max_size is not None:
                if max_size < 0:
                    group.pop("max", None)
                else:
                    group["max"] = max_size
            low, high = int(group.get("min", 0)), group.get("max")
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
        """Senlin adopts standalone nodes: each becomes an instance of the cluster's document
        and its row joins the cluster in the same transaction, so planning finds it made."""
        refs: list[str] = params["nodes"]
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            found: dict[str, NodeRecord] = {}
            missing: list[str] = []
            for r in refs:
                try:
                    found[r] = find_node(conn, who, r)
                except NotFound:
                    missing.append(r)
            if missing:
                raise BadRequest(f"Nodes not found: {missing}.")
            owned = [r for r, n in found.items() if n.cluster_id is not None]
            if owned:
                raise BadRequest(f"Nodes {owned} already owned by some cluster.")
            extras = senlin_node_repo.get_extras(conn, [n.id for n in found.values()])
            mine = meta.decode(cluster.document.get("metadata", {})).profile_id
            cluster_type = self._profile_type(conn, who, mine)
            odd = [
                r
                for r, n in found.items()
                if self._profile_type(
                    conn, who, extras[n.id].profile_id if n.id in extras else None
                )
                != cluster_type
            ]
            if odd:
                raise BadRequest(f"Profile type of nodes {odd} does not match that of the cluster.")
            idle = [r for r, n in found.items() if n.status is not NodeStatus.ACTIVE]
            if idle:
                raise BadRequest(f"Nodes are not ACTIVE: {idle}.")
            taken = {n.name for n in node_repo.list_nodes(conn, cluster.id)}
            # A joining node keeps its name, which shares one namespace with the cluster's
            # node groups (named after the cluster): say so in Senlin's words, not the
            # document's (found by the Senlin oracle, tests/senlin_live).
            taken |= {str(g.get("name")) for g in cluster.document.get("node_groups", [])}
            clash = [n.name for n in found.values() if n.name in taken]
            if clash:
                raise BadRequest(f"The cluster already has nodes named {clash}.")
            desired = cluster_view(cluster, node_repo.list_nodes(conn, cluster.id), None)
            was = Bounds(desired["min_size"], desired["max_size"], desired["desired_capacity"])
            problem = check_size_params(
                was, desired["desired_capacity"] + len(found), None, None, True
            )
            if problem:
                raise BadRequest(problem)
        nodes = list(found.values())
        instances = [{"name": n.name, "profile": copy.deepcopy(n.profile)} for n in nodes]

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            doc.setdefault("instances", []).extend(copy.deepcopy(instances))
            return doc

        def adopt(conn: Conn, c: ClusterRecord, now: float) -> None:
            node_repo.update_nodes(
                conn,
                [
                    {"node_id": n.id, "cluster_id": c.id, "group_name": n.name, "updated_at": now}
                    for n in nodes
                ],
            )

        inputs = {"nodes": [n.name for n in nodes], SENLIN_ACTION: "CLUSTER_ADD_NODES"}
        return self.svc.submit(
            who, cluster.id, ActionKind.CLUSTER_ADD_NODES, mutate, inputs, within=adopt
        )

    def create_member(self, who: Principal, data: dict[str, Any]) -> tuple[str, Submitted]:
        """`POST /v1/nodes` with a cluster: a new instance of the cluster's document (the
        engine plans and makes it); the cluster's id and the submitted action."""
        name = str(data["name"])
        if not is_name(name):
            raise BadRequest(f"Invalid node name '{name}': {NAME_RULE}.")
        ref, pref = str(data["cluster_id"]), str(data["profile_id"])
        with self.db.reading() as conn:
            try:
                row = self.profiles.row(conn, who, pref)
            except NotFound:
                raise BadRequest(f"The specified profile '{pref}' could not be found.") from None
            try:
                cluster = self.svc.get(conn, who, ref)
            except NotFound:
                raise BadRequest(f"The specified cluster '{ref}' could not be found.") from None
            mine = meta.decode(cluster.document.get("metadata", {})).profile_id
            if row["type"] != self._profile_type(conn, who, mine):
                raise BadRequest("Node and cluster have different profile type, operation aborted.")
            view = cluster_view(cluster, node_repo.list_nodes(conn, cluster.id), None)
            was = Bounds(view["min_size"], view["max_size"], view["desired_capacity"])
            problem = check_size_params(was, view["desired_capacity"] + 1, None, None, True)
            if problem:
                raise BadRequest(problem)
        instance = {"name": name, "profile": self.profiles.native(row)}
        return cluster.id, self.svc.add_nodes(who, cluster.id, [instance])

    def _profile_type(self, conn: Conn, who: Principal, profile_id: str | None) -> str:
        if profile_id is None:
            return "os.nova.server-1.0"
        try:
            return str(self.profiles.row(conn, who, profile_id)["type"])
        except (NotFound, BadRequest):
            return "os.nova.server-1.0"

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

    def _members(
        self, conn: Conn, who: Principal, cluster: ClusterRecord, refs: list[str]
    ) -> list[NodeRecord]:
        """The nodes `refs` name, all members of `cluster`; Senlin's 400s otherwise."""
        found: dict[str, NodeRecord] = {}
        missing: list[str] = []
        for ref in refs:
            try:
                found[ref] = find_node(conn, who, ref)
            except NotFound:
                missing.append(ref)
        if missing:
            raise BadRequest(f"Nodes not found: {missing}.")
        strangers = [r for r, n in found.items() if n.cluster_id != cluster.id]
        if strangers:
            raise BadRequest(f"Nodes not members of specified cluster: {strangers}.")
        return list(found.values())

    def del_nodes(
        self, who: Principal, ref: str, refs: list[str], destroy: bool = False
    ) -> Submitted:
        """Senlin's del_nodes: the nodes leave the cluster and stay, standalone; with
        `destroy_after_deletion` they are deleted."""
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            nodes = self._members(conn, who, cluster, refs)
            view = cluster_view(cluster, node_repo.list_nodes(conn, cluster.id), None)
            was = Bounds(view["min_size"], view["max_size"], view["desired_capacity"])
            problem = check_size_params(
                was, view["desired_capacity"] - len(nodes), None, None, True
            )
            if problem:
                raise BadRequest(problem)
        if destroy:
            return self.svc.del_nodes(who, cluster.id, [n.id for n in nodes])
        profile_id = meta.decode(cluster.document.get("metadata", {})).profile_id
        return self._swap(who, cluster.id, nodes, [], profile_id, "CLUSTER_DEL_NODES")

    def replace_nodes(self, who: Principal, ref: str, pairs: dict[str, str]) -> Submitted:
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            missing = []
            for old in pairs:
                try:
                    find_node(conn, who, old)
                except NotFound:
                    missing.append(old)
            if missing:
                raise BadRequest(f"Original nodes not found: {missing}.")
            missing = []
            for new in pairs.values():
                try:
                    find_node(conn, who, new)
                except NotFound:
                    missing.append(new)
            if missing:
                raise BadRequest(f"Replacement nodes not found: {missing}.")
            olds = {o: find_node(conn, who, o) for o in pairs}
            strangers = [o for o, n in olds.items() if n.cluster_id != cluster.id]
            if strangers:
                raise BadRequest(
                    f"Nodes {strangers} to be replaced are not members of the cluster {ref}."
                )
            news = {v: find_node(conn, who, v) for v in pairs.values()}
            owned = [v for v, n in news.items() if n.cluster_id is not None]
            if owned:
                raise BadRequest(f"Nodes {owned} already member of a cluster.")
            mine = self._profile_type(
                conn, who, meta.decode(cluster.document.get("metadata", {})).profile_id
            )
            extras = senlin_node_repo.get_extras(conn, [n.id for n in news.values()])
            odd = [
                v
                for v, n in news.items()
                if self._profile_type(
                    conn, who, extras[n.id].profile_id if n.id in extras else None
                )
                != mine
            ]
            if odd:
                raise BadRequest(f"Profile type of nodes {odd} do not match that of the cluster.")
            idle = [v for v, n in news.items() if n.status is not NodeStatus.ACTIVE]
            if idle:
                raise BadRequest(f"Nodes are not ACTIVE: {idle}.")
            leaving = {n.id for n in olds.values()}
            taken = {n.name for n in node_repo.list_nodes(conn, cluster.id) if n.id not in leaving}
            clash = [n.name for n in news.values() if n.name in taken]
            if clash:
                raise BadRequest(f"The cluster already has nodes named {clash}.")
        profile_id = meta.decode(cluster.document.get("metadata", {})).profile_id
        return self._swap(
            who,
            cluster.id,
            list(olds.values()),
            list(news.values()),
            profile_id,
            "CLUSTER_REPLACE_NODES",
        )

    def _swap(
        self,
        who: Principal,
        cluster_id: str,
        olds: list[NodeRecord],
        news: list[NodeRecord],
        profile_id: str | None,
        senlin_action: str,
    ) -> Submitted:
        """Nodes leave the cluster and stay, standalone (Senlin's del_nodes, and the originals
        of its replace_nodes); standalone nodes join it, as `add_nodes` adopts them. One
        action, one transaction."""
        joining = [{"name": n.name, "profile": copy.deepcopy(n.profile)} for n in news]

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            groups = {g["name"]: g for g in doc.get("node_groups", [])}
            gone: set[str] = set()
            for n in olds:
                group = groups.get(n.group_name)
                if group is None:
                    gone.add(n.name)
                    continue
                if "unit" in group or int(group.get("count", 0)) - 1 < int(group.get("min", 0)):
                    raise FeatureNotSupported(
                        f"Node {n.name} cannot leave its node group (a unit of several "
                        "members, or at its min); use recover with operation REPLACE."
                    )
                group["count"] = int(group.get("count", 0)) - 1
            kept = [i for i in doc.get("instances", []) if i["name"] not in gone]
            doc["instances"] = kept + copy.deepcopy(joining)
            return doc

        def swap(conn: Conn, c: ClusterRecord, now: float) -> None:
            senlin_node_repo.record_profiles(
                conn, c.project_id, [n.id for n in olds], profile_id, only_unset=True
            )
            leave = [
                {"node_id": n.id, "cluster_id": None, "group_name": "", "updated_at": now}
                for n in olds
            ]
            join = [
                {"node_id": n.id, "cluster_id": c.id, "group_name": n.name, "updated_at": now}
                for n in news
            ]
            node_repo.update_nodes(conn, leave + join)

        inputs: dict[str, Any] = {SENLIN_ACTION: senlin_action}
        if news:
            inputs["nodes"] = {o.name: n.name for o, n in zip(olds, news, strict=True)}
            kind = ActionKind.CLUSTER_ADD_NODES
        else:
            inputs["nodes"] = [o.name for o in olds]
            kind = ActionKind.CLUSTER_DEL_NODES
        return self.svc.submit(who, cluster_id, kind, mutate, inputs, within=swap)

    # -- nodes --------------------------------------------------------------------------------

    def delete_node(self, who: Principal, ref: str) -> Submitted:
        """A member node deleted: the cluster shrinks by it (Senlin lowers desired capacity)."""
        with self.db.reading() as conn:
            node = find_node(conn, who, ref)
        if node.cluster_id is None:
            raise FeatureNotSupported("standalone nodes are deleted through the node API")
        return self.svc.del_nodes(who, node.cluster_id, [node.id])

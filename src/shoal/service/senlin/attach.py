"""Attaching, detaching and toggling policies on a cluster (Senlin's policy_attach,
policy_detach and policy_update cluster actions).

The cluster's bindings live in its document's metadata (`senlin.policies`). Each change
recomputes the document: the fields written by every policy involved are cleared, then the
enabled bindings are applied in order; the change is a CLUSTER_UPDATE action, so the engine
acts on the new policies as on any document (zones, groupings and all).
"""

from __future__ import annotations

import dataclasses

from shoal.model.enums import ActionKind
from shoal.service.clusters import Asked, ClusterService, Submitted
from shoal.service.errors import NotFound
from shoal.service.senlin import meta
from shoal.service.senlin.action_bodies import PolicyBody
from shoal.service.senlin.edits import BindPolicies
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.meta import PolicyBinding
from shoal.service.senlin.policy_store import SenlinPolicies, checked_of, policy_view
from shoal.service.senlin.shapes import PolicyBindingView
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.store.records import ClusterRecord, Principal
from shoal.store.senlin_policies import PolicyRecord


def _policy_id(body: PolicyBody) -> str:
    pid = body.policy_id
    if not pid:
        raise BadRequest("The 'policy_id' field is missing in the request.")
    return pid


class SenlinAttach:
    def __init__(self, clusters: ClusterService, policies: SenlinPolicies) -> None:
        self.svc = clusters
        self.policies = policies
        self.db = clusters.db

    def _load(
        self, who: Principal, ref: str, pid: str
    ) -> tuple[ClusterRecord, PolicyRecord, tuple[PolicyBinding, ...], dict[str, PolicyRecord]]:
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            try:
                policy = self.policies.row(conn, who, pid)
            except NotFound:
                raise BadRequest(f"The specified policy '{pid}' could not be found.") from None
            bound = meta.decode(cluster.document.get("metadata", {})).policies
            rows = {b.policy_id: self.policies.row(conn, who, b.policy_id) for b in bound}
        rows[policy.id] = policy
        return cluster, policy, bound, rows

    def attach(self, who: Principal, ref: str, body: PolicyBody) -> Submitted:
        cluster, policy, bound, rows = self._load(who, ref, _policy_id(body))
        enabled = True if body.enabled is None else body.enabled
        if any(b.policy_id == policy.id for b in bound):
            raise BadRequest(
                f"The policy '{policy.id}' is already attached to cluster '{cluster.name}'."
            )
        new = checked_of(policy)
        for b in bound:
            old = checked_of(rows[b.policy_id])
            # Senlin's scaling policies are not singletons: several may be attached (the
            # last enabled one sets the group's scaling; a scale uses the first for its event).
            if old.short == new.short and new.short != "scaling":
                raise BadRequest(
                    f"Only one instance of policy type ({old.type_name.rsplit('-', 1)[0]}) "
                    f"can be attached to a cluster, but another instance ({b.policy_id}) "
                    "is found attached."
                )
        after = (*bound, PolicyBinding(policy.id, enabled))
        return self._apply(who, cluster, bound, after, rows, "CLUSTER_ATTACH_POLICY", policy)

    def detach(self, who: Principal, ref: str, body: PolicyBody) -> Submitted:
        cluster, policy, bound, rows = self._load(who, ref, _policy_id(body))
        if not any(b.policy_id == policy.id for b in bound):
            raise BadRequest(
                f"The policy '{body.policy_id}' is not attached to the specified cluster '{ref}'."
            )
        after = tuple(b for b in bound if b.policy_id != policy.id)
        return self._apply(who, cluster, bound, after, rows, "CLUSTER_DETACH_POLICY", policy)

    def update(self, who: Principal, ref: str, body: PolicyBody) -> Submitted:
        cluster, policy, bound, rows = self._load(who, ref, _policy_id(body))
        if not any(b.policy_id == policy.id for b in bound):
            raise BadRequest(
                f"The policy '{body.policy_id}' is not attached to the specified cluster '{ref}'."
            )
        after = tuple(
            dataclasses.replace(b, enabled=body.enabled)
            if b.policy_id == policy.id and body.enabled is not None
            else b
            for b in bound
        )
        return self._apply(who, cluster, bound, after, rows, "CLUSTER_UPDATE_POLICY", policy)

    def _apply(
        self,
        who: Principal,
        cluster: ClusterRecord,
        before: tuple[PolicyBinding, ...],
        after: tuple[PolicyBinding, ...],
        rows: dict[str, PolicyRecord],
        senlin_action: str,
        policy: PolicyRecord,
    ) -> Submitted:
        change = BindPolicies(before, after, rows)
        asked = Asked(
            ActionKind.CLUSTER_UPDATE, {SENLIN_ACTION: senlin_action, "policy_id": policy.id}
        )
        return self.svc.submit(who, cluster.id, [change], asked)

    def bindings(self, who: Principal, ref: str) -> list[PolicyBindingView]:
        """Senlin's cluster-policy bindings of a cluster."""
        with self.db.reading() as conn:
            cluster = self.svc.get(conn, who, ref)
            bound = meta.decode(cluster.document.get("metadata", {})).policies
            out: list[PolicyBindingView] = []
            for b in bound:
                try:
                    view = policy_view(self.policies.row(conn, who, b.policy_id))
                except NotFound:
                    continue
                out.append(
                    {
                        "id": b.policy_id,
                        "cluster_id": cluster.id,
                        "cluster_name": cluster.name,
                        "policy_id": b.policy_id,
                        "policy_name": view["name"],
                        "policy_type": view["type"],
                        "enabled": b.enabled,
                        "data": {},
                    }
                )
        return out

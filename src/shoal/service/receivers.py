"""Receivers: webhook URLs that scale a node group or a workload out or in, or recover a
cluster.

A receiver belongs to its cluster's project. Its secret (`token` in the webhook URL) is shown
once, at creation, and stored hashed; whoever holds the URL may trigger it without a bearer
token, and a wrong token or unknown receiver is indistinguishable (404). A scaling trigger is an
edit (`ScaleByPolicy`) on the cluster service's one path for changes: in its transaction, it
checks the group's cooldown, works out the new count from the scaling policy
(`service/triggers.py`), and names the times to record (the group scaled, the receiver fired)
as store effects — all or nothing. A receiver with `workload: W` scales that workload's
replicas the same way (`ScaleWorkloadByPolicy`: the receiver's params as its scaling policy,
bounded by the workload's `min`/`max`, its own cooldown).

A workload receiver is stored without a new column: its action as `workload_scale_out` /
`workload_scale_in` and the workload's name where a node group's would be
(`StoredAction`); the views show `action` and `workload` as the request gave them.
"""

from __future__ import annotations

import builtins
import copy
import secrets
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shoal.documents.names import NAME_RULE, is_name
from shoal.model.enums import ActionKind
from shoal.model.problems import Problem
from shoal.service.clusters import Asked, ClusterService, Submitted
from shoal.service.edits import (
    RECEIVER,
    ScaleByPolicy,
    ScaleWorkloadByPolicy,
    spec_group,
    spec_workload,
)
from shoal.service.errors import Conflict, Invalid, NotFound, ServiceError
from shoal.service.triggers import Scalable, check_params, effective_policy, scaled, scaled_count
from shoal.service.views import iso
from shoal.store import receivers as repo
from shoal.store.database import Connection
from shoal.store.errors import NameTaken
from shoal.store.receivers import ReceiverRecord
from shoal.store.records import ClusterRecord, Principal

_Views = list[dict[str, Any]]
"""Receivers' views (an alias: in the service, `list` names its method)."""


class ReceiverAction(StrEnum):
    SCALE_OUT = "scale_out"
    SCALE_IN = "scale_in"
    RECOVER = "recover"


class StoredAction(StrEnum):
    """The `action` column of a workload receiver (a node group's is its `ReceiverAction`)."""

    WORKLOAD_SCALE_OUT = "workload_scale_out"
    WORKLOAD_SCALE_IN = "workload_scale_in"


_WORKLOAD_ACTIONS = {
    ReceiverAction.SCALE_OUT: StoredAction.WORKLOAD_SCALE_OUT,
    ReceiverAction.SCALE_IN: StoredAction.WORKLOAD_SCALE_IN,
}


@dataclass(frozen=True, slots=True)
class Target:
    """What a stored receiver acts on, read back from its row: its action and the node group
    (or None: the only one, or the whole cluster) or the workload."""

    action: ReceiverAction
    nodegroup: str | None
    workload: str | None

    @classmethod
    def of(cls, r: ReceiverRecord) -> Target:
        for action, stored in _WORKLOAD_ACTIONS.items():
            if r.action == stored:
                return cls(action, None, r.nodegroup)
        return cls(ReceiverAction(r.action), r.nodegroup, None)


@dataclass(frozen=True, slots=True)
class NewReceiver:
    name: str
    cluster: str
    action: ReceiverAction
    nodegroup: str | None
    params: dict[str, Any]
    workload: str | None = None


def webhook_path(receiver_id: str, secret: str) -> str:
    return f"/v1/webhooks/{receiver_id}/trigger?token={secret}"


def receiver_view(r: ReceiverRecord, secret: str | None = None) -> dict[str, Any]:
    target = Target.of(r)
    out: dict[str, Any] = {
        "id": r.id,
        "name": r.name,
        "project": r.project_id,
        "cluster_id": r.cluster_id,
        "action": str(target.action),
        "nodegroup": target.nodegroup,
        "params": r.params,
    }
    if target.workload is not None:
        out["workload"] = target.workload
    if secret is not None:
        out["webhook_url"] = webhook_path(r.id, secret)
    out["created_at"] = iso(r.created_at)
    out["triggered_at"] = iso(r.triggered_at)
    return out


def parse_receiver(body: dict[str, Any]) -> NewReceiver:
    """The creation request, or a 422 with every problem."""
    problems: list[Problem] = []
    name, cluster, action, group = (
        body.get("name"),
        body.get("cluster"),
        body.get("action"),
        body.get("nodegroup"),
    )
    if not isinstance(name, str) or not is_name(name):
        problems.append(Problem("/name", NAME_RULE))
    if not isinstance(cluster, str) or not cluster:
        problems.append(Problem("/cluster", "the cluster's name or id is required"))
    if action not in set(ReceiverAction):
        problems.append(Problem("/action", f"one of {', '.join(ReceiverAction)}"))
    if group is not None and not isinstance(group, str):
        problems.append(Problem("/nodegroup", "a node group name"))
    if action == ReceiverAction.RECOVER and group is not None:
        problems.append(Problem("/nodegroup", "recover acts on the whole cluster"))
    workload = body.get("workload")
    if workload is not None:
        if not isinstance(workload, str) or not is_name(workload):
            problems.append(Problem("/workload", "a workload name"))
        if group is not None:
            problems.append(Problem("/workload", "give a nodegroup or a workload, not both"))
        if action == ReceiverAction.RECOVER:
            problems.append(Problem("/workload", "recover acts on the whole cluster"))
    fields = {"name", "cluster", "action", "nodegroup", "params", "workload"}
    unknown = sorted(set(body) - fields)
    problems += [Problem(f"/{k}", "unknown field") for k in unknown]
    try:
        params = check_params(body.get("params"))
    except Invalid as bad:
        problems += bad.problems
        params = {}
    if action == ReceiverAction.RECOVER and params:
        problems.append(Problem("/params", "recover takes no params"))
    if problems:
        raise Invalid(f"the receiver has {len(problems)} problem(s)", problems)
    return NewReceiver(
        str(name),
        str(cluster),
        ReceiverAction(str(action)),
        group,
        params,
        None if workload is None else str(workload),
    )


class ReceiverService:
    def __init__(self, clusters: ClusterService) -> None:
        self.clusters = clusters
        self.db = clusters.db
        self.clock = clusters.clock

    @staticmethod
    def _scope(who: Principal) -> str | None:
        return None if who.is_admin else who.project_id

    def create(self, who: Principal, body: dict[str, Any]) -> dict[str, Any]:
        """A new receiver, with its webhook URL (the only time the secret is shown)."""
        return receiver_view(*self.add(who, parse_receiver(body)))

    def add(self, who: Principal, req: NewReceiver) -> tuple[ReceiverRecord, str]:
        """A new receiver and its secret (the only time it is known)."""
        secret = secrets.token_urlsafe(32)
        if req.action is ReceiverAction.SCALE_OUT:
            with self.db.reading() as conn:
                cluster = self.clusters.get(conn, who, req.cluster)
            self._check_growth(who, cluster, req)
        with self.db.transaction() as conn:
            cluster = self.clusters.get(conn, who, req.cluster)
            self._check_count(conn, cluster)
            group = req.nodegroup
            action = str(req.action)
            if req.workload is not None:
                group = spec_workload(self.clusters.spec_of(cluster.document), req.workload).name
                action = str(_WORKLOAD_ACTIONS[req.action])
            elif req.action is not ReceiverAction.RECOVER:
                group = spec_group(self.clusters.spec_of(cluster.document), group, RECEIVER).name
            try:
                found = repo.insert_receiver(
                    conn,
                    id=str(uuid.uuid4()),
                    project_id=cluster.project_id,
                    cluster_id=cluster.id,
                    name=req.name,
                    action=action,
                    nodegroup=group,
                    params=req.params,
                    secret=secret,
                    now=self.clock.now(),
                )
            except NameTaken as e:
                raise Conflict(str(e), [Problem("/name", str(e))]) from None
        return found, secret

    def _check_count(self, conn: Connection, cluster: ClusterRecord) -> None:
        """A cluster's receivers are bounded (`receivers_per_cluster`): each is a row, a secret
        and a URL anyone holding it may call; 10,000 on one cluster were accepted."""
        limit = self.clusters.limits.receivers_per_cluster
        used = repo.count_for_cluster(conn, cluster.id)
        if used >= limit:
            raise Conflict(
                f"cluster {cluster.name} already has {used} receivers, its limit",
                [
                    {
                        "path": "/cluster",
                        "message": f"at most {limit} receivers per cluster",
                        "limit": limit,
                        "in_use": used,
                    }
                ],
            )

    def _check_growth(self, who: Principal, cluster: ClusterRecord, req: NewReceiver) -> None:
        """Refuse params whose first trigger could never be admitted (too large for the
        cluster size limit, the inventory or the quotas); each trigger checks again."""
        spec = self.clusters.spec_of(cluster.document)
        pointer = next((f"/params/{k}" for k in ("count", "number") if k in req.params), "")
        doc = copy.deepcopy(cluster.document)
        if req.workload is not None:
            w = spec_workload(spec, req.workload)
            try:
                replicas = scaled(
                    Scalable.of_workload(w), effective_policy(w.scaling, req.params), out=True
                )
            except Conflict:
                return  # at its max today; not a problem of the params
            doc["workloads"][w.name]["replicas"] = replicas
        else:
            group = spec_group(spec, req.nodegroup, RECEIVER)
            policy = effective_policy(group.scaling, req.params)
            try:
                target = scaled_count(group, policy, out=True)
            except Conflict:
                return  # at its bound today; not a problem of the params
            for g in doc.get("node_groups", []):
                if g["name"] == group.name:
                    g["count"] = target
        try:
            self.clusters.admissible(who, cluster, doc)
        except ServiceError as refused:
            refused.details = [dict(d, path=pointer) for d in refused.details]
            raise

    def list(self, who: Principal) -> list[dict[str, Any]]:
        return [receiver_view(r) for r in self.records(who)]

    def records(self, who: Principal) -> builtins.list[ReceiverRecord]:
        with self.db.reading() as conn:
            return repo.list_receivers(conn, self._scope(who))

    def page(self, who: Principal, limit: int, marker: str | None) -> tuple[_Views, str | None]:
        """A page of receivers (`limit` checked by the caller) and the next page's marker."""
        with self.db.reading() as conn:
            got = repo.page_receivers(conn, self._scope(who), limit, marker)
        if got is None:
            raise ServiceError(
                f"no receiver {marker!r} in this list to page from",
                [Problem("query:marker", "names no receiver of this list")],
            )
        found, more = got
        return [receiver_view(r) for r in found], found[-1].id if more and found else None

    def _get(self, conn: Connection, who: Principal, ref: str) -> ReceiverRecord:
        found = repo.get_receiver(conn, ref, self._scope(who))
        if found is None:
            raise NotFound(f"no receiver {ref!r}")
        return found

    def get(self, who: Principal, ref: str) -> dict[str, Any]:
        return receiver_view(self.record(who, ref))

    def record(self, who: Principal, ref: str) -> ReceiverRecord:
        with self.db.reading() as conn:
            return self._get(conn, who, ref)

    def delete(self, who: Principal, ref: str) -> None:
        with self.db.transaction() as conn:
            repo.delete_receiver(conn, self._get(conn, who, ref).id)

    def trigger(self, receiver_id: str, secret: str | None) -> Submitted:
        """Run the receiver's action, if `secret` is its secret; 404 otherwise."""
        with self.db.reading() as conn:
            r = repo.receiver_by_id(conn, receiver_id)
        if r is None or not secret or not repo.secret_matches(r.secret_hash, secret):
            raise NotFound("no such receiver, or the token is not its token")
        owner = Principal(r.project_id, is_admin=False)
        target = Target.of(r)
        if target.action is ReceiverAction.RECOVER:
            return self._recover(owner, r)
        return self._scale(owner, r, target, out=target.action is ReceiverAction.SCALE_OUT)

    def _recover(self, owner: Principal, r: ReceiverRecord) -> Submitted:
        sub = self.clusters.recover(owner, r.cluster_id, nodes=None)
        with self.db.transaction() as conn:
            repo.mark_triggered(conn, r.id, self.clock.now())
        return sub

    def _scale(
        self, owner: Principal, r: ReceiverRecord, target: Target, *, out: bool
    ) -> Submitted:
        kind = ActionKind.CLUSTER_SCALE_OUT if out else ActionKind.CLUSTER_SCALE_IN
        if target.workload is not None:
            scale = ScaleWorkloadByPolicy(r.id, target.workload, r.params, out)
            said = {"receiver": r.name, "workload": target.workload}
            return self.clusters.submit(owner, r.cluster_id, [scale], Asked(kind, said))
        change = ScaleByPolicy(r.id, target.nodegroup, r.params, out)
        return self.clusters.submit(
            owner, r.cluster_id, [change], Asked(kind, {"receiver": r.name})
        )

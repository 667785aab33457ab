"""Cluster requests: create, change and delete clusters and node groups, as actions.

Every request that changes a cluster, its creation included, follows one path (`_submit`,
called by the native API, the CLI, receivers, vclusters, HOT and the Senlin façade): the
request is a list of typed edits (`service/edits.py`) and what it asked (`Asked`). In one
transaction `_submit` reads the cluster and refuses if another action holds it (ClusterBusy),
applies the edits to a copy of its document (for a new cluster, `ReplaceDocument` on an empty
one), performs the store writes the edits named (`service/effects.py`), validates the result
(Invalid, with every problem), checks sizes and quotas, places it as a dry run (`_place`,
Unplaceable with reasons), stores it, records the action and takes the lock. The placement
itself is first tried on a snapshot without the placement lock and kept, under the lock, only
if nothing it read has changed and its new nodes still fit (`service/guess.py`, issue 23): the
lock is no longer held for a solve of a big cluster's change. A create above
`sync_place_max_nodes` skips the dry run (issue 23): admitted on its size, quotas and the free
capacity in total, its action places it (all or nothing, the cluster removed if it cannot).
The engine does the rest. A recovery changes no document, so it is recorded the way the
engine records its own (`engine.submit.submit_recover`). `preview` places a change the way
`_submit` does, and records nothing.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shoal.clock import Clock
from shoal.documents import cluster_from_tree
from shoal.documents.export import to_document
from shoal.documents.syntax import parse
from shoal.documents.vcluster import is_vcluster
from shoal.engine.contracts import ClusterInputs, Repair, RepairHow
from shoal.engine.decide import observed_of
from shoal.engine.settle import current_nodes, declared_nodes
from shoal.engine.stale import stages_for
from shoal.engine.submit import submit_recover
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import (
    ActionKind,
    ActionStatus,
    ClusterStatus,
    Health,
    NodeKind,
    NodeStatus,
)
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand
from shoal.model.problems import InvalidDocument, Problem
from shoal.placement import PlacementResult, solve
from shoal.planning import ObservedNode, StepKind, choose_replicas, make_plan
from shoal.planning.plan import Plan
from shoal.service import edits, transition_preview
from shoal.service.containers import ContainerGate
from shoal.service.deletion import dropped, victim_orders
from shoal.service.edits import Edit
from shoal.service.errors import (
    ClusterBusy,
    Conflict,
    Invalid,
    NotFound,
    ServiceError,
    placement_refusal,
)
from shoal.service.footprint import Footprint, footprint
from shoal.service.guess import Guess, held_by_host
from shoal.service.limits import (
    QUOTA_RESOURCES,
    Limits,
    check_free,
    check_quota,
    check_size,
    usage_of,
)
from shoal.service.resize import Adjustment
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as deployment_repo
from shoal.store import nodes as node_repo
from shoal.store import quotas as quota_repo
from shoal.store import reservations as reservation_repo
from shoal.store import workloads as replica_repo
from shoal.store.actions import NewAction
from shoal.store.database import Connection, Database
from shoal.store.errors import NameTaken
from shoal.store.events import NewEvent, add_events
from shoal.store.placement import lock_placement
from shoal.store.quotas import Usage
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord, Principal
from shoal.store.reservations import UNPLACED, Reserved

RECOVERY_METHODS = tuple(
    str(h) for h in (RepairHow.RECREATE, RepairHow.REBOOT, RepairHow.REBUILD, RepairHow.REPLACE)
)

_ROLLING = (ActionKind.CLUSTER_UPDATE, ActionKind.NODEGROUP_UPDATE)
"""Changes the engine may roll out in batches, and roll back to the document they replaced."""


@dataclass(frozen=True, slots=True)
class Asked:
    """What a request asked for beside its edits: the action it becomes, what it said
    (recorded with the action for people and the Senlin views, never read by the engine), and
    for a new cluster the format its document came in."""

    kind: ActionKind
    said: Mapping[str, Any] = field(default_factory=dict)
    source_format: str = "native"


def problems_of(bad: InvalidDocument, prefix: str = "") -> list[Problem]:
    return [Problem(prefix + p.path, p.message) for p in bad.problems]


@dataclass(frozen=True, slots=True)
class Submitted:
    cluster: ClusterRecord
    action: ActionRecord


class ClusterService:
    def __init__(
        self,
        db: Database,
        inventory: Callable[[], Inventory],
        clock: Clock,
        wake: Callable[[], None],
        limits: Limits | None = None,
        containers: ContainerGate | None = None,
    ) -> None:
        self.containers = containers
        """Who may run containers on `local` (service/containers.py); None: anyone."""
        self.db = db
        self.inventory = inventory
        self.clock = clock
        self.wake = wake
        self.limits = limits or Limits()

    # -- reading -------------------------------------------------------------------------------

    def get(self, conn: Connection, who: Principal, ref: str) -> ClusterRecord:
        found = cluster_repo.get_cluster(conn, ref, None if who.is_admin else who.project_id)
        if found is None:
            raise NotFound(f"no cluster {ref!r}")
        return found

    # -- creating and changing: each request as edits on the one path ---------------------------

    def create(self, who: Principal, body: bytes | str, *, source: str = "request") -> Submitted:
        spec, vcluster = self._read_document(body, source)
        first = edits.ReplaceDocument(to_document(spec))
        fmt = "vcluster" if vcluster else "native"
        return self._submit(who, None, [first], Asked(ActionKind.CLUSTER_CREATE, source_format=fmt))

    def update(self, who: Principal, ref: str, body: bytes | str) -> Submitted:
        """Apply a whole new document to an existing cluster."""
        spec, _ = self._read_document(body, "request")
        change = edits.ReplaceDocument(to_document(spec))
        return self._submit(who, ref, [change], Asked(ActionKind.CLUSTER_UPDATE))

    def delete(self, who: Principal, ref: str) -> Submitted:
        return self._submit(who, ref, [], Asked(ActionKind.CLUSTER_DELETE))

    def resize(
        self,
        who: Principal,
        ref: str,
        change: edits.Resize,
        kind: ActionKind = ActionKind.CLUSTER_RESIZE,
    ) -> Submitted:
        said = {
            "adjustment_type": str(change.adjustment),
            "number": change.number,
            "nodegroup": change.nodegroup,
        }
        return self._submit(who, ref, [change], Asked(kind, said))

    def scale(
        self, who: Principal, ref: str, *, out: bool, count: int, nodegroup: str | None
    ) -> Submitted:
        if count < 1:
            raise Invalid("count must be 1 or more", [Problem("/count", f"{count} < 1")])
        change = edits.Resize(
            Adjustment.CHANGE_IN_CAPACITY,
            count if out else -count,
            nodegroup,
            pointer="/count",
        )
        kind = ActionKind.CLUSTER_SCALE_OUT if out else ActionKind.CLUSTER_SCALE_IN
        return self.resize(who, ref, change, kind)

    def scale_workload(self, who: Principal, ref: str, workload: str, replicas: int) -> Submitted:
        """A workload's replicas set to exactly `replicas` (min/max checked by the edit)."""
        said = {"workload": workload, "replicas": replicas}
        change = edits.ScaleWorkload(workload, replicas)
        return self._submit(who, ref, [change], Asked(ActionKind.CLUSTER_RESIZE, said))

    def add_nodes(self, who: Principal, ref: str, instances: list[dict[str, Any]]) -> Submitted:
        names = [str(i.get("name")) for i in instances if isinstance(i, dict)]
        change = edits.AddInstances(tuple(instances))
        return self._submit(
            who, ref, [change], Asked(ActionKind.CLUSTER_ADD_NODES, {"nodes": names})
        )

    def del_nodes(self, who: Principal, ref: str, node_refs: list[str]) -> Submitted:
        change = edits.RemoveNodes(tuple(node_refs))
        asked = Asked(ActionKind.CLUSTER_DEL_NODES, {"nodes": node_refs})
        return self._submit(who, ref, [change], asked)

    def nodegroup_create(self, who: Principal, ref: str, group: dict[str, Any]) -> Submitted:
        asked = Asked(ActionKind.NODEGROUP_CREATE, {"nodegroup": group.get("name")})
        return self._submit(who, ref, [edits.AddGroup(group)], asked)

    def nodegroup_update(
        self, who: Principal, ref: str, name: str, changes: dict[str, Any]
    ) -> Submitted:
        change = edits.UpdateGroup(name, changes)  # refuses bad fields before anything is read
        asked = Asked(ActionKind.NODEGROUP_UPDATE, {"nodegroup": name, "changes": changes})
        return self._submit(who, ref, [change], asked)

    def nodegroup_delete(self, who: Principal, ref: str, name: str) -> Submitted:
        asked = Asked(ActionKind.NODEGROUP_DELETE, {"nodegroup": name})
        return self._submit(who, ref, [edits.DeleteGroup(name)], asked)

    def recover(
        self, who: Principal, ref: str, nodes: list[str] | None = None, how: str | None = None
    ) -> Submitted:
        """Repair nodes: named ones, or every node in ERROR, unhealthy or on a lost host.

        `how`: recreate (in place), reboot, rebuild, or replace (placed again elsewhere);
        default: recreate for named nodes, each node's health policy for the rest. A node whose
        host has left the inventory is always replaced, named or not: no other repair can
        work, and placing the named nodes again needs every node on a host that exists.
        """
        if how is not None and how not in RECOVERY_METHODS:
            raise Invalid(
                f"unknown recovery {how!r}",
                [Problem("/how", f"one of {', '.join(RECOVERY_METHODS)}")],
            )
        now = self.clock.now()
        with self.db.reading() as conn:
            cluster = self.get(conn, who, ref)
            records = node_repo.list_nodes(conn, cluster.id)
        by_ref = {n.id: n for n in records} | {n.name: n for n in records}
        lost = _on_lost_hosts(records, {h.name for h in self.inventory().hosts})
        if nodes:
            missing = [r for r in nodes if r not in by_ref]
            if missing:
                raise NotFound(
                    f"no node {', '.join(missing)} in cluster {cluster.name}",
                    [Problem(f"/nodes/{nodes.index(m)}", "no such node") for m in missing],
                )
            chosen = [by_ref[r] for r in dict.fromkeys(nodes)]
        else:
            # INIT leftovers (never made) are recovered too, and declared nodes that do not
            # exist are made by the recovery's plan.
            chosen = [
                n
                for n in records
                if n.status in (NodeStatus.ERROR, NodeStatus.INIT) or n.health == Health.UNHEALTHY
            ]
        chosen += [n for n in lost if n not in chosen]
        absent = 0 if nodes else declared_nodes(cluster.document) - len(current_nodes(records))
        if not chosen and absent <= 0:
            raise Conflict(f"no node of cluster {cluster.name} needs recovering")
        spec = self._validated(cluster.document)
        repairs: list[Repair] = []
        for n in chosen:
            method = RepairHow(how) if how is not None else None
            if method is None:
                policy = spec.health_of(n.group_name)
                by_policy = RepairHow.of_policy(policy.recovery) if policy is not None else None
                method = by_policy if not nodes and by_policy else RepairHow.RECREATE
            method = method.fitted(n.kind, made=n.provider_id is not None)
            if n in lost:
                method = RepairHow.REPLACE
            why = f"host {n.host} lost" if n in lost else "requested"
            repairs.append(Repair(n.name, method, why))
        if absent > 0:
            repairs.append(Repair.missing(absent))
        action_id = submit_recover(self.db, cluster, repairs, now, "recovery requested")
        if action_id is None:
            with self.db.reading() as conn:
                held = cluster_repo.get_cluster(conn, cluster.id)
            raise ClusterBusy(cluster.name, held.lock_action_id if held else None)
        self.wake()
        with self.db.reading() as conn:
            action = action_repo.get_action(conn, action_id)
            fresh = cluster_repo.get_cluster(conn, cluster.id)
        assert action is not None and fresh is not None
        return Submitted(fresh, action)

    def preview(self, who: Principal, ref: str, body: bytes | str | None) -> dict[str, Any]:
        """What applying `body` (default: the current document) would do, changing nothing:
        creates and deletes with their hosts, and the batches of any rolling update."""
        inv = self.inventory()
        with self.db.reading() as conn:
            cluster = self.get(conn, who, ref)
            nodes = node_repo.list_nodes(conn, cluster.id)
            used = node_repo.used_capacity(conn, exclude_cluster=cluster.id)
            deployed, replicas = _what_runs(conn, cluster.id, nodes)
        current = self._validated(cluster.document)
        if body:
            spec, _ = self._read_document(body, "request")
        else:
            spec = current
        observed = observed_of(nodes)
        desired, result = _place(cluster, spec, observed, nodes, [], used, inv)
        hosts = {a.node: a.host for a in result.assignments}
        zones = {a.node: a.zone for a in result.assignments}
        plan = make_plan(desired, hosts, zones, observed)
        return {
            "cluster": cluster.name,
            "create": [
                {"node": st.node, "host": st.host, "zone": st.zone}
                for st in plan.of(StepKind.CREATE)
            ],
            "delete": [st.node for st in plan.of(StepKind.DELETE)],
            "attach": [{"volume": st.node, "server": st.server} for st in plan.of(StepKind.ATTACH)],
            "update_batches": [
                {"group": st.group, "nodes": list(st.nodes)} for st in stages_for(desired, nodes)
            ],
            "soft_violations": [v.as_dict() for v in result.soft_violations],
            "replicas": [r.as_dict() for r in result.replicas],
            "changes": [
                c.as_dict()
                for c in transition_preview.changes(
                    current, spec, _servers(nodes, plan), deployed, replicas
                )
            ],
        }

    def cancel(self, who: Principal, action_id: str) -> ActionRecord:
        with self.db.transaction() as conn:
            action = action_repo.get_action(
                conn, action_id, None if who.is_admin else who.project_id
            )
            if action is None:
                raise NotFound(f"no action {action_id!r}")
            if action.status.is_terminal:
                raise Conflict(f"action {action_id} has already ended ({action.status})")
            if action.parent_id is not None:
                raise Conflict("cancel the cluster action, not one of its steps")
            action_repo.request_cancel(conn, action_id)
            if action.status in (ActionStatus.READY, ActionStatus.INIT) and action.owner is None:
                # Not started: nothing to unwind.
                now = self.clock.now()
                action_repo.set_status(
                    conn, action_id, ActionStatus.CANCELLED, now, reason="cancelled by request"
                )
                if action.cluster_id:
                    cluster = cluster_repo.get_cluster(
                        conn, action.cluster_id, include_deleted=True
                    )
                    cluster_repo.unlock(conn, action.cluster_id, action_id, now)
                    if cluster is not None and cluster.status is ClusterStatus.INIT:
                        cluster_repo.set_status(
                            conn, cluster.id, ClusterStatus.DELETED, "creation cancelled", now
                        )
            found = action_repo.get_action(conn, action_id)
            assert found is not None
        self.wake()
        return found

    # -- the one path every change takes -------------------------------------------------------

    def submit(
        self, who: Principal, ref: str | None, changes: Sequence[Edit], asked: Asked
    ) -> Submitted:
        """A change another service defines (a receiver's trigger, the Senlin façade), on the
        same path: `_submit`."""
        return self._submit(who, ref, changes, asked)

    def spec_of(self, doc: dict[str, Any]) -> ClusterSpec:
        """`doc` read as a cluster, or a 422 naming its problems."""
        return self._validated(doc)

    def _submit(
        self, who: Principal, ref: str | None, changes: Sequence[Edit], asked: Asked
    ) -> Submitted:
        """Every change of a cluster, its creation included (`ref` None: `ReplaceDocument` on
        an empty cluster). In one transaction: refuse if another action holds the cluster,
        apply the edits to a copy of its document, perform the store writes they name (nodes
        joining or leaving count in the dry run), validate the document, check sizes and
        quotas, place it as a dry run, store it, record the action and take the lock. No
        edits: an action on the cluster as it is (a delete)."""
        inv = self.inventory()
        now = self.clock.now()
        guess = self._guess(who, ref, changes, inv, now) if changes else None
        with self.db.transaction() as conn:
            if changes:
                # First, as the planner does: one lock order, so the two never deadlock.
                lock_placement(conn, self.db, "admission", now)
            cluster = None if ref is None else self._free(conn, who, ref)
            nodes = [] if cluster is None else node_repo.list_nodes(conn, cluster.id)
            current = None if cluster is None else self._read_or_none(cluster.document)
            scene = edits.Scene(cluster, tuple(nodes), current, now)
            start = {} if cluster is None else copy.deepcopy(cluster.document)
            applied = edits.apply_all(changes, start, scene)
            if applied.effects:
                # Before the dry run: nodes joining or leaving change what it places.
                assert cluster is not None, "a new cluster has nothing to write beside it"
                for effect in applied.effects:
                    effect.perform(conn, cluster, now)
                nodes = node_repo.list_nodes(conn, cluster.id)
            placed: tuple[ClusterSpec, PlacementResult] | None = None
            deferred: Footprint | None = None
            victims = applied.victims
            if changes:
                spec = self._validated(applied.document)
                if self.containers is not None:
                    self.containers.check(who, spec.software)
                fp = check_size(spec, inv, self.limits)
                if cluster is None:
                    self._check_quota(conn, who.project_id, None, fp)
                else:
                    declared = usage_of(footprint(current)) if current is not None else Usage()
                    self._check_quota(conn, cluster.project_id, cluster.id, fp, declared)
                if cluster is None:
                    # Issue 23: a large create is admitted on its size, quotas and the free
                    # capacity in total (O(hosts)); its action places it, all or nothing. What
                    # such creates were promised counts against every create until placed.
                    pending = reservation_repo.reserved_unplaced(conn)
                    if fp.nodes > self.limits.sync_place_max_nodes:
                        deferred = fp
                    if deferred is not None or pending != Demand():
                        check_free(spec, fp, inv, node_repo.used_capacity(conn), pending)
                if deferred is None:
                    if guess is not None and guess.holds(
                        conn, cluster, nodes, applied.document, victims, inv
                    ):
                        chosen, placed = guess.chosen, guess.placed
                    else:
                        chosen, placed = self._dry_run(
                            conn, cluster, spec, nodes, list(victims), inv
                        )
                    victims = victims or tuple(chosen)
                if cluster is None:
                    cluster = self._insert(conn, who, spec, asked.source_format, now)
                else:
                    cluster_repo.set_document(conn, cluster.id, to_document(spec), now)
            assert cluster is not None
            if ref is None:
                action_inputs = ClusterInputs(
                    request=dict(asked.said), place_in_engine=deferred is not None
                )
                action_id = str(cluster.lock_action_id)
            else:
                action_inputs = ClusterInputs(
                    victims=victims,
                    # A rolling update that fails rolls back to this.
                    previous_document=cluster.document if asked.kind in _ROLLING else None,
                    request={**asked.said, **applied.decided},
                )
                action_id = str(uuid.uuid4())
            action = self._record_action(conn, cluster, asked.kind, action_inputs, action_id, now)
            if ref is not None and not cluster_repo.try_lock(conn, cluster.id, action.id, now):
                held = cluster_repo.get_cluster(conn, cluster.id)
                raise ClusterBusy(cluster.name, held.lock_action_id if held else None)
            if placed is not None:
                _reserve(conn, action, *placed)
            elif deferred is not None:
                reservation_repo.reserve(
                    conn,
                    action.id,
                    cluster.id,
                    cluster.project_id,
                    [Reserved(UNPLACED, deferred.nodes, deferred.demand)],
                )
        self.wake()
        return Submitted(cluster, action)

    def _guess(
        self, who: Principal, ref: str | None, changes: Sequence[Edit], inv: Inventory, now: float
    ) -> Guess | None:
        """`_submit`'s dry run on a snapshot, without the placement lock; None when there is
        nothing to guess (the cluster busy or missing, edits that write, a document that does
        not read or place, a create placed by its action): the locked path then decides, and
        refuses, exactly as before."""
        try:
            with self.db.reading() as conn:
                cluster = None if ref is None else self._free(conn, who, ref)
                nodes = [] if cluster is None else node_repo.list_nodes(conn, cluster.id)
                current = None if cluster is None else self._read_or_none(cluster.document)
                scene = edits.Scene(cluster, tuple(nodes), current, now)
                start = {} if cluster is None else copy.deepcopy(cluster.document)
                applied = edits.apply_all(changes, start, scene)
                if applied.effects:
                    return None
                spec = self._validated(applied.document)
                fp = check_size(spec, inv, self.limits)
                if cluster is None and fp.nodes > self.limits.sync_place_max_nodes:
                    return None
                chosen, placed = self._dry_run(
                    conn, cluster, spec, nodes, list(applied.victims), inv
                )
        except ServiceError:
            return None
        return Guess.of(cluster, nodes, applied.document, applied.victims, chosen, placed)

    def _free(self, conn: Connection, who: Principal, ref: str) -> ClusterRecord:
        """The cluster `ref`, refused while another action holds it."""
        cluster = self.get(conn, who, ref)
        if cluster.lock_action_id is not None:
            raise ClusterBusy(cluster.name, cluster.lock_action_id)
        return cluster

    def _insert(
        self, conn: Connection, who: Principal, spec: ClusterSpec, source_format: str, now: float
    ) -> ClusterRecord:
        """A new cluster's row, locked by its create action from the start."""
        try:
            return cluster_repo.insert_cluster(
                conn,
                id=str(uuid.uuid4()),
                project_id=who.project_id,
                name=spec.name,
                document=to_document(spec),
                source_format=source_format,
                now=now,
                lock_action_id=str(uuid.uuid4()),
            )
        except NameTaken as e:
            raise Conflict(str(e), [Problem("/name", str(e))]) from None

    def _read_or_none(self, doc: dict[str, Any]) -> ClusterSpec | None:
        """The stored document read as a cluster; None when it no longer reads (the inventory
        changed under it): growth is then judged from nothing."""
        try:
            return self._validated(doc)
        except Invalid:
            return None

    def _read_document(self, body: bytes | str, source: str) -> tuple[ClusterSpec, bool]:
        """A request's cluster document, and whether it came in the vcluster format."""
        try:
            data = parse(body, source)
            return cluster_from_tree(data, self.inventory()), is_vcluster(data)
        except InvalidDocument as bad:
            raise Invalid(
                f"the cluster document has {len(bad.problems)} problem(s)", problems_of(bad)
            ) from None

    def _validated(self, doc: dict[str, Any]) -> ClusterSpec:
        try:
            return cluster_from_tree(doc, self.inventory())
        except InvalidDocument as bad:
            raise Invalid(
                f"the change leaves the cluster with {len(bad.problems)} problem(s)",
                problems_of(bad),
            ) from None

    def _dry_run(
        self,
        conn: Connection,
        cluster: ClusterRecord | None,
        spec: ClusterSpec,
        nodes: list[NodeRecord],
        victims: list[str],
        inv: Inventory,
    ) -> tuple[list[str], tuple[ClusterSpec, PlacementResult]]:
        """Place the changed cluster: the nodes it leaves out (by the deletion policies), and
        the desired cluster with its placement."""
        observed = observed_of(nodes)
        used = node_repo.used_capacity(conn, exclude_cluster=cluster.id if cluster else None)
        desired, result = _place(cluster, spec, observed, nodes, victims, used, inv)
        return dropped(desired, observed), (desired, result)

    def _check_quota(
        self,
        conn: Connection,
        project_id: str,
        cluster_id: str | None,
        fp: Footprint,
        current: Usage | None = None,
    ) -> None:
        """Refuse growth past the project's quotas (admission holds the placement lock):
        `fp` is what the cluster would declare, `current` what it declares now."""
        current = current or Usage()
        overrides = quota_repo.overrides(conn, project_id)
        limits = self.limits
        if all(limits.quota_of(r, overrides, project_id) < 0 for r in QUOTA_RESOURCES):
            return
        others = quota_repo.usage(conn, project_id, exclude_cluster=cluster_id)
        check_quota(project_id, limits, overrides, others, current, usage_of(fp))

    def admissible(self, who: Principal, cluster: ClusterRecord, doc: dict[str, Any]) -> None:
        """Refuse (422/409/403) if `cluster` could never become `doc`: its size, the whole
        inventory, the project's quotas. No placement, no lock: a check made ahead of time (a
        receiver's params), repeated when the change is really asked for."""
        spec = self._validated(doc)
        fp = check_size(spec, self.inventory(), self.limits)
        with self.db.reading() as conn:
            self._check_quota(conn, cluster.project_id, cluster.id, fp, self._declared(cluster))

    def _declared(self, cluster: ClusterRecord) -> Usage:
        """What the cluster's current document declares (growth is judged against it)."""
        current = self._read_or_none(cluster.document)
        return usage_of(footprint(current)) if current is not None else Usage()

    def _record_action(
        self,
        conn: Connection,
        cluster: ClusterRecord,
        kind: ActionKind,
        inputs: ClusterInputs,
        action_id: str,
        now: float,
    ) -> ActionRecord:
        action_repo.insert_actions(
            conn,
            [
                NewAction(
                    id=action_id,
                    project_id=cluster.project_id,
                    kind=kind,
                    cluster_id=cluster.id,
                    inputs=inputs.to_json(),
                )
            ],
            now,
        )
        add_events(
            conn,
            [
                NewEvent(
                    project_id=cluster.project_id,
                    obj_type="ACTION",
                    obj_name=str(kind),
                    status=str(ActionStatus.READY),
                    message=f"{kind} accepted for cluster {cluster.name}",
                    cluster_id=cluster.id,
                    action_id=action_id,
                )
            ],
            now,
        )
        found = action_repo.get_action(conn, action_id)
        assert found is not None
        return found


def _reserve(
    conn: Connection, action: ActionRecord, desired: ClusterSpec, result: PlacementResult
) -> None:
    """Record what the action's new nodes will take, host by host, until it is planned."""
    held = held_by_host(desired, result)
    assert action.cluster_id is not None
    reservation_repo.reserve(
        conn,
        action.id,
        action.cluster_id,
        action.project_id,
        [Reserved(host, n, d) for host, (n, d) in sorted(held.items())],
    )


def _place(
    cluster: ClusterRecord | None,
    spec: ClusterSpec,
    observed: list[ObservedNode],
    nodes: list[NodeRecord],
    victims: list[str],
    used: dict[str, Demand],
    inv: Inventory,
) -> tuple[ClusterSpec, PlacementResult]:
    """Place `cluster` changed to `spec`, its nodes staying where they are: the desired cluster
    (replicas chosen, the deletion policies picking who goes) and its placement; refused
    with the reasons when it cannot be placed. A submitted change and a preview both use it."""
    orders = victim_orders(spec, observed, seed=cluster.generation if cluster else 0)
    desired = choose_replicas(spec, observed, victims, order_victims=orders)
    result = solve(desired, inv, existing={n.name: n.host for n in nodes if n.host}, used=used)
    if not result.feasible:
        what = "cannot be placed" if cluster is None else "cannot be placed after this change"
        raise placement_refusal(result.undecided)(
            f"cluster {spec.name} {what}", [Problem("", r) for r in result.reasons]
        )
    return desired, result


def _on_lost_hosts(records: list[NodeRecord], hosts: set[str]) -> list[NodeRecord]:
    """The nodes placed on a host the inventory no longer has (failed, or gone)."""
    return [n for n in records if n.host and n.host not in hosts]


def _what_runs(
    conn: Connection, cluster_id: str, nodes: list[NodeRecord]
) -> tuple[list[transition_preview.Deployed], dict[str, str]]:
    """The deployments run on the cluster's standing servers, and its replicas (name ->
    workload) on them: what a transition's preview compares the new document with."""
    standing = {n.id: n.name for n in nodes if n.deleted_at is None}
    names = set(standing.values())
    deployed = [
        transition_preview.Deployed(
            r.name, r.node_name, r.hook, r.config_body.config if r.config_body else None
        )
        for r in deployment_repo.for_cluster(conn, cluster_id, revisions=True)
        if r.node_id in standing
    ]
    rows = replica_repo.load(conn, [cluster_id])[cluster_id]
    return deployed, {r.replica: r.workload for r in rows.values() if r.node in names}


def _servers(nodes: list[NodeRecord], plan: Plan) -> transition_preview.Servers:
    """Servers by group before the plan and after it (its deletes gone, its creates made)."""
    before: dict[str, list[str]] = {}
    for n in nodes:
        if n.deleted_at is None and n.kind is NodeKind.SERVER and "~" not in n.name:
            before.setdefault(n.group_name, []).append(n.name)
    deleted = {st.node for st in plan.of(StepKind.DELETE)}
    after = {g: [n for n in ns if n not in deleted] for g, ns in before.items()}
    for st in plan.of(StepKind.CREATE):
        if st.spec is not None and st.spec.kind is NodeKind.SERVER:
            after.setdefault(st.spec.group, []).append(st.node)
    return transition_preview.Servers(
        {g: tuple(ns) for g, ns in before.items()}, {g: tuple(ns) for g, ns in after.items()}
    )

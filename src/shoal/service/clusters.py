"""Cluster requests: create, change and delete clusters and node groups, as actions.

Every change of an existing cluster follows one path (`_submit`): read the cluster, refuse if
another action holds it (Conflict), compute the new document with a pure edit (`edits`),
validate it (Invalid, with every problem), place it as a dry run (`_place`, Unplaceable with
reasons), then in the same transaction store the new document, take the cluster's lock and
record the action. The engine does the rest. A new cluster has no lock to take and no document
to edit, so `create_spec` admits it in its own transaction; a recovery changes no document, so
it is recorded the way the engine records its own (`engine.submit.submit_recover`). `preview`
places a change the way `_submit` does, and records nothing.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shoal.clock import Clock
from shoal.engine.contracts import ClusterInputs, Repair, RepairHow
from shoal.engine.decide import observed_of
from shoal.engine.settle import current_nodes, declared_nodes
from shoal.engine.stale import stages_for
from shoal.engine.submit import submit_recover
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, Health, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, expand
from shoal.model.problems import InvalidDocument, Problem
from shoal.placement import PlacementResult, solve
from shoal.planning import ObservedNode, StepKind, choose_replicas, make_plan
from shoal.service import edits
from shoal.service.containers import ContainerGate
from shoal.service.deletion import dropped, victim_orders
from shoal.service.errors import Conflict, Invalid, NotFound, placement_refusal
from shoal.service.limits import (
    QUOTA_RESOURCES,
    Footprint,
    Limits,
    check_quota,
    check_size,
    footprint,
)
from shoal.service.resize import Adjustment
from shoal.spec import cluster_from_tree
from shoal.spec.export import to_document
from shoal.spec.syntax import parse
from shoal.spec.vcluster import is_vcluster
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import quotas as quota_repo
from shoal.store import reservations as reservation_repo
from shoal.store.actions import NewAction
from shoal.store.database import Connection, Database
from shoal.store.errors import NameTaken
from shoal.store.events import NewEvent, add_events
from shoal.store.placement import lock_placement
from shoal.store.quotas import Usage
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord, Principal
from shoal.store.reservations import Reserved

RECOVERY_METHODS = tuple(
    str(h) for h in (RepairHow.RECREATE, RepairHow.REBOOT, RepairHow.REBUILD, RepairHow.REPLACE)
)

Mutation = Callable[[dict[str, Any], list[NodeRecord]], dict[str, Any]]
Within = Callable[[Connection, ClusterRecord, float], None]
"""Runs in a change's transaction once the cluster is known to be free, with the time of the
change: it may refuse the change (raise) or write alongside it (cooldowns, receivers)."""


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

    # -- creating ------------------------------------------------------------------------------

    def create(self, who: Principal, body: bytes | str, *, source: str = "request") -> Submitted:
        spec, vcluster = self._read_document(body, source)
        return self.create_spec(who, spec, "vcluster" if vcluster else "native")

    def create_spec(self, who: Principal, spec: ClusterSpec, source_format: str) -> Submitted:
        inv = self.inventory()
        now = self.clock.now()
        fp = check_size(spec, inv, self.limits)
        if self.containers is not None:
            self.containers.check(who, spec.software)
        with self.db.transaction() as conn:
            # Admission is serialised with planning, so what it counts cannot change under it.
            lock_placement(conn, self.db, "admission", now)
            self._check_quota(conn, who.project_id, None, fp)
            used = node_repo.used_capacity(conn)
            result = solve(spec, inv, used=used)
            if not result.feasible:
                raise placement_refusal(result.undecided)(
                    f"cluster {spec.name} cannot be placed",
                    [Problem("", r) for r in result.reasons],
                )
            cluster_id = str(uuid.uuid4())
            action_id = str(uuid.uuid4())
            try:
                cluster = cluster_repo.insert_cluster(
                    conn,
                    id=cluster_id,
                    project_id=who.project_id,
                    name=spec.name,
                    document=to_document(spec),
                    source_format=source_format,
                    now=now,
                    lock_action_id=action_id,
                )
            except NameTaken as e:
                raise Conflict(str(e), [Problem("/name", str(e))]) from None
            action = self._record_action(
                conn, cluster, ActionKind.CLUSTER_CREATE, ClusterInputs(), action_id, now
            )
            _reserve(conn, action, spec, result)
        self.wake()
        return Submitted(cluster, action)

    # -- changing ------------------------------------------------------------------------------

    def update(self, who: Principal, ref: str, body: bytes | str) -> Submitted:
        """Apply a whole new document to an existing cluster."""
        spec, _ = self._read_document(body, "request")
        new_doc = to_document(spec)

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return edits.replace_document(doc, new_doc)

        return self._submit(who, ref, ActionKind.CLUSTER_UPDATE, mutate, {})

    def delete(self, who: Principal, ref: str) -> Submitted:
        return self._submit(who, ref, ActionKind.CLUSTER_DELETE, None, {})

    def resize(
        self,
        who: Principal,
        ref: str,
        *,
        adjustment: Adjustment,
        number: float,
        nodegroup: str | None = None,
        min_step: int = 1,
        strict: bool = True,
        kind: ActionKind = ActionKind.CLUSTER_RESIZE,
        min_size: int | None = None,
        max_size: int | None = None,
        pointer: str = "/number",
    ) -> Submitted:
        change = edits.Resize(
            adjustment, number, nodegroup, min_step, strict, min_size, max_size, pointer
        )

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return edits.resize(doc, change)

        inputs = {"adjustment_type": str(adjustment), "number": number, "nodegroup": nodegroup}
        return self._submit(who, ref, kind, mutate, inputs)

    def scale(
        self, who: Principal, ref: str, *, out: bool, count: int, nodegroup: str | None
    ) -> Submitted:
        if count < 1:
            raise Invalid("count must be 1 or more", [Problem("/count", f"{count} < 1")])
        return self.resize(
            who,
            ref,
            adjustment=Adjustment.CHANGE_IN_CAPACITY,
            number=count if out else -count,
            nodegroup=nodegroup,
            kind=ActionKind.CLUSTER_SCALE_OUT if out else ActionKind.CLUSTER_SCALE_IN,
            pointer="/count",
        )

    def add_nodes(self, who: Principal, ref: str, instances: list[dict[str, Any]]) -> Submitted:
        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return edits.add_instances(doc, instances)

        names = [str(i.get("name")) for i in instances if isinstance(i, dict)]
        return self._submit(who, ref, ActionKind.CLUSTER_ADD_NODES, mutate, {"nodes": names})

    def del_nodes(self, who: Principal, ref: str, node_refs: list[str]) -> Submitted:
        victims: list[str] = []

        def mutate(doc: dict[str, Any], nodes: list[NodeRecord]) -> dict[str, Any]:
            edited, chosen = edits.remove_nodes(doc, nodes, node_refs)
            victims.extend(chosen)
            return edited

        return self._submit(
            who, ref, ActionKind.CLUSTER_DEL_NODES, mutate, {"nodes": node_refs}, victims
        )

    def nodegroup_create(self, who: Principal, ref: str, group: dict[str, Any]) -> Submitted:
        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return edits.add_node_group(doc, group)

        return self._submit(
            who, ref, ActionKind.NODEGROUP_CREATE, mutate, {"nodegroup": group.get("name")}
        )

    def nodegroup_update(
        self, who: Principal, ref: str, name: str, changes: dict[str, Any]
    ) -> Submitted:
        edits.check_group_changes(changes)  # before anything is read or locked

        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return edits.update_node_group(doc, name, changes)

        return self._submit(
            who, ref, ActionKind.NODEGROUP_UPDATE, mutate, {"nodegroup": name, "changes": changes}
        )

    def nodegroup_delete(self, who: Principal, ref: str, name: str) -> Submitted:
        def mutate(doc: dict[str, Any], _nodes: list[NodeRecord]) -> dict[str, Any]:
            return edits.delete_node_group(doc, name)

        return self._submit(who, ref, ActionKind.NODEGROUP_DELETE, mutate, {"nodegroup": name})

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
            raise Conflict(
                f"cluster {cluster.name} is busy with another action; "
                "try again when it has finished"
            )
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
        if body:
            spec, _ = self._read_document(body, "request")
        else:
            spec = self._validated(cluster.document)
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
        self,
        who: Principal,
        ref: str,
        kind: ActionKind,
        mutate: Mutation,
        inputs: dict[str, Any],
        *,
        within: Within | None = None,
    ) -> Submitted:
        """A change another service defines (a receiver's trigger), on the same path.

        `inputs` is what the request said, recorded with the action for people to read."""
        return self._submit(who, ref, kind, mutate, inputs, within=within)

    def spec_of(self, doc: dict[str, Any]) -> ClusterSpec:
        """`doc` read as a cluster, or a 422 naming its problems."""
        return self._validated(doc)

    def _submit(
        self,
        who: Principal,
        ref: str,
        kind: ActionKind,
        mutate: Mutation | None,
        inputs: dict[str, Any],
        victims: list[str] | None = None,
        *,
        within: Within | None = None,
    ) -> Submitted:
        inv = self.inventory()
        now = self.clock.now()
        with self.db.transaction() as conn:
            if mutate is not None:
                # First, as the planner does: one lock order, so the two never deadlock.
                lock_placement(conn, self.db, "admission", now)
            cluster = self.get(conn, who, ref)
            if cluster.lock_action_id is not None:
                raise Conflict(
                    f"cluster {cluster.name} is busy with action {cluster.lock_action_id}; "
                    "try again when it has finished",
                    [Problem("", f"locked by action {cluster.lock_action_id}")],
                )
            if within is not None:
                within(conn, cluster, now)
            nodes = node_repo.list_nodes(conn, cluster.id)
            placed: tuple[ClusterSpec, PlacementResult] | None = None
            if mutate is not None:
                doc = mutate(copy.deepcopy(cluster.document), nodes)
                spec = self._validated(doc)
                if self.containers is not None:
                    self.containers.check(who, spec.software)
                fp = check_size(spec, inv, self.limits)
                self._check_quota(conn, cluster.project_id, cluster.id, fp, self._declared(cluster))
                chosen, placed = self._dry_run(conn, cluster, spec, nodes, victims or [], inv)
                victims = victims or chosen
                cluster_repo.set_document(conn, cluster.id, to_document(spec), now)
            action_inputs = ClusterInputs(
                victims=tuple(victims or ()),
                # A rolling update that fails rolls back to this.
                previous_document=cluster.document
                if kind in (ActionKind.CLUSTER_UPDATE, ActionKind.NODEGROUP_UPDATE)
                else None,
                request=inputs,
            )
            action = self._record_action(conn, cluster, kind, action_inputs, str(uuid.uuid4()), now)
            if not cluster_repo.try_lock(conn, cluster.id, action.id, now):
                raise Conflict(f"cluster {cluster.name} is busy with another action")
            if placed is not None:
                _reserve(conn, action, *placed)
        self.wake()
        return Submitted(cluster, action)

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
        cluster: ClusterRecord,
        spec: ClusterSpec,
        nodes: list[NodeRecord],
        victims: list[str],
        inv: Inventory,
    ) -> tuple[list[str], tuple[ClusterSpec, PlacementResult]]:
        """Place the changed cluster: the nodes it leaves out (by the deletion policies), and
        the desired cluster with its placement."""
        observed = observed_of(nodes)
        used = node_repo.used_capacity(conn, exclude_cluster=cluster.id)
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
        check_quota(project_id, limits, overrides, others, current, fp.usage())

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
        try:
            return footprint(self._validated(cluster.document)).usage()
        except Invalid:
            return Usage()

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
    demands = {n.name: n.demand for n in expand(desired)}
    held: dict[str, tuple[int, Demand]] = {}
    for a in result.assignments:
        if a.existing or a.node not in demands:
            continue
        count, total = held.get(a.host, (0, Demand()))
        held[a.host] = (count + 1, total + demands[a.node])
    assert action.cluster_id is not None
    reservation_repo.reserve(
        conn,
        action.id,
        action.cluster_id,
        action.project_id,
        [Reserved(host, n, d) for host, (n, d) in sorted(held.items())],
    )


def _place(
    cluster: ClusterRecord,
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
    orders = victim_orders(spec, observed, seed=cluster.generation)
    desired = choose_replicas(spec, observed, victims, order_victims=orders)
    result = solve(desired, inv, existing={n.name: n.host for n in nodes if n.host}, used=used)
    if not result.feasible:
        raise placement_refusal(result.undecided)(
            f"cluster {cluster.name} cannot be placed after this change",
            [Problem("", r) for r in result.reasons],
        )
    return desired, result


def _on_lost_hosts(records: list[NodeRecord], hosts: set[str]) -> list[NodeRecord]:
    """The nodes placed on a host the inventory no longer has (failed, or gone)."""
    return [n for n in records if n.host and n.host not in hosts]

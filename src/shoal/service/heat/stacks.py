"""Heat's stacks over Shoal's clusters: create, update (PUT and PATCH), delete, preview, look
up, show and list, in Heat's shapes.

A stack is a cluster of the same id and name, made by `ClusterService` from the HOT body (the
same path as `POST /v1/clusters`, so every size, count and quota of the native API holds); the
body is kept beside it (`store/heat.py`). A stack's status is its newest top-level action's
(`statuses.py`), its outputs the cluster's, evaluated live.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shoal.clock import Clock
from shoal.model.inventory import Inventory
from shoal.service.clusters import ClusterService
from shoal.service.errors import ClusterBusy, Conflict, Invalid, ServiceError
from shoal.service.heat import bodies
from shoal.service.heat.bodies import StackBody
from shoal.service.heat.errors import (
    ActionInProgress,
    EntityNotFound,
    StackExists,
    StackValidationFailed,
)
from shoal.service.heat.listing import filtered, list_query, paged, sorted_by
from shoal.service.heat.reading import Reading, Readings
from shoal.service.heat.statuses import Phase, heat_action, iso, phase_of
from shoal.service.queries import Queries
from shoal.store import clusters as cluster_repo
from shoal.store import heat as heat_repo
from shoal.store.database import Database
from shoal.store.heat import StackRow
from shoal.store.records import ActionRecord, ClusterRecord, Principal

MAX_STACKS_LISTED = 10_000
"""A list reads at most this many of a project's stacks (then filters, sorts and pages)."""
DELETE_WAIT_S = 30.0
"""How long a delete waits for a cancelled action to let go of the cluster."""


@dataclass(frozen=True, slots=True)
class Found:
    """A stack found for a request: its row, its cluster, its newest action."""

    row: StackRow
    cluster: ClusterRecord | None
    action: ActionRecord | None


class HeatStacks:
    def __init__(
        self,
        db: Database,
        clusters: ClusterService,
        queries: Queries,
        inventory: Callable[[], Inventory],
        clock: Clock,
        readings: Readings,
    ) -> None:
        self.db = db
        self.clusters = clusters
        self.queries = queries
        self.inventory = inventory
        self.clock = clock
        self.readings = readings

    # -- finding ------------------------------------------------------------------------------

    @staticmethod
    def _scope(who: Principal) -> str | None:
        return None if who.is_admin else who.project_id

    def identify(self, who: Principal, name: str) -> StackRow:
        """A live stack by name (or by id): what the 302 lookups redirect to."""
        with self.db.reading() as conn:
            found = heat_repo.find_stacks(conn, self._scope(who), name)
            if not found:
                row = heat_repo.get_stack(conn, name)
                if row is not None and (who.is_admin or row.project_id == who.project_id):
                    found = [row]
        if not found:
            raise EntityNotFound(f"The Stack ({name}) could not be found.")
        return found[0]

    def find(self, who: Principal, name: str, stack_id: str) -> Found:
        with self.db.reading() as conn:
            row = heat_repo.get_stack(conn, stack_id)
            if row is None or (not who.is_admin and row.project_id != who.project_id):
                raise EntityNotFound(f"The Stack ({name}) could not be found.")
            if name not in (row.name, row.cluster_id):
                raise EntityNotFound(f"The Stack ({name}) could not be found.")
            cluster = cluster_repo.get_cluster(conn, row.cluster_id, include_deleted=True)
            action = heat_repo.latest_actions(conn, [row.cluster_id]).get(row.cluster_id)
        return Found(row, cluster, action)

    def reading(self, row: StackRow) -> Reading:
        return self.readings.of(row, self.inventory())

    def phase(self, found: Found) -> Phase:
        now = self.clock.now()
        if found.action is None:
            return Phase(
                "CREATE", "IN_PROGRESS", "Stack CREATE started", found.row.created_at, None
            )
        knobs = self.reading(found.row).knobs(heat_action(found.action.kind))
        return phase_of(found.action, knobs, now)

    # -- changing -----------------------------------------------------------------------------

    def create(self, who: Principal, data: object) -> StackRow:
        body = bodies.create_body(data)
        with self.db.reading() as conn:
            if heat_repo.find_stacks(conn, who.project_id, body.name):
                raise StackExists(f"The Stack ({body.name}) already exists.")
        try:
            submitted = self.clusters.create(who, json.dumps(body.reader_body()), source="heat")
        except Conflict as taken:
            if isinstance(taken, ClusterBusy):
                raise
            raise StackExists(f"The Stack ({body.name}) already exists.") from None
        except Invalid as bad:
            raise _validation(bad) from None
        row = StackRow(
            submitted.cluster.id,
            who.project_id,
            body.name,
            body.hot,
            body.disable_rollback,
            body.timeout_mins,
            body.tags,
            submitted.cluster.created_at,
        )
        with self.db.transaction() as conn:
            heat_repo.put_stack(conn, row)
        return row

    def update(
        self, who: Principal, name: str, stack_id: str, data: object, *, patch: bool
    ) -> None:
        found = self.find(who, name, stack_id)
        self._settled(found)
        before = StackBody(
            found.row.name,
            found.row.body,
            found.row.disable_rollback,
            found.row.timeout_mins,
            found.row.tags,
        )
        body = bodies.update_body(data, before, patch=patch)
        try:
            self.clusters.update(who, found.row.cluster_id, json.dumps(body.reader_body()))
        except ClusterBusy:
            raise ActionInProgress(
                f"Stack {found.row.name} already has an action ({self.phase(found).action}) in "
                "progress."
            ) from None
        except Invalid as bad:
            raise _validation(bad) from None
        with self.db.transaction() as conn:
            heat_repo.put_stack(
                conn,
                StackRow(
                    found.row.cluster_id,
                    found.row.project_id,
                    found.row.name,
                    body.hot,
                    body.disable_rollback,
                    body.timeout_mins,
                    body.tags,
                    found.row.created_at,
                    self.clock.now(),
                ),
            )

    def _settled(self, found: Found) -> None:
        """Heat refuses an update while the stack's action is in progress; so does Shoal
        (a TestResource's wait included)."""
        if found.row.deleted_at is not None:
            raise EntityNotFound(f"The Stack ({found.row.name}) could not be found.")
        if self.phase(found).status == "IN_PROGRESS":
            raise ActionInProgress(
                f"Stack {found.row.name} already has an action ({self.phase(found).action}) in "
                "progress."
            )

    def delete(self, who: Principal, name: str, stack_id: str) -> None:
        found = self.find(who, name, stack_id)
        if found.row.deleted_at is not None:
            raise EntityNotFound(f"The Stack ({name}) could not be found.")
        self._delete_cancelling(who, found.row)
        with self.db.transaction() as conn:
            heat_repo.set_deleted(conn, found.row.cluster_id, self.clock.now())

    def _delete_cancelling(self, who: Principal, row: StackRow) -> None:
        """Heat deletes a stack whose action is still in progress (cancelling it): Shoal asks
        the action holding the cluster to cancel, and deletes once it has let go (bounded)."""
        deadline = time.monotonic() + DELETE_WAIT_S
        asked = False
        while True:
            try:
                self.clusters.delete(who, row.cluster_id)
                return
            except ClusterBusy as busy:
                if not asked and busy.action_id is not None:
                    with contextlib.suppress(ServiceError):  # it may have ended meanwhile
                        self.clusters.cancel(who, busy.action_id)
                    asked = True
                if time.monotonic() > deadline:
                    raise ActionInProgress(
                        f"Stack {row.name} already has an action in progress."
                    ) from None
            time.sleep(0.05)

    # -- showing ------------------------------------------------------------------------------

    @staticmethod
    def _parameters(reading: Reading, name: str, stack_id: str, project: str) -> dict[str, Any]:
        return parameters_of(reading, name, stack_id, project)

    def summary(self, found: Found, base: str) -> dict[str, Any]:
        row = found.row
        phase = self.phase(found)
        reading = self.reading(row)
        return {
            "id": row.cluster_id,
            "stack_name": row.name,
            "description": reading.description,
            "creation_time": iso(row.created_at),
            "updated_time": iso(row.updated_at),
            "deletion_time": iso(row.deleted_at)
            if phase.status == "COMPLETE" and phase.action == "DELETE"
            else None,
            "stack_status": f"{phase.action}_{phase.status}",
            "stack_status_reason": phase.reason,
            "stack_owner": None,
            "parent": None,
            "stack_user_project_id": row.project_id,
            "project": row.project_id,
            "tags": row.tags or None,
            "links": [{"href": f"{base}/stacks/{row.name}/{row.cluster_id}", "rel": "self"}],
        }

    def show(self, who: Principal, name: str, stack_id: str, base: str) -> dict[str, Any]:
        found = self.find(who, name, stack_id)
        reading = self.reading(found.row)
        out = self.summary(found, base)
        out.update(
            {
                "template_description": reading.description,
                "disable_rollback": found.row.disable_rollback,
                "timeout_mins": found.row.timeout_mins,
                "capabilities": [],
                "notification_topics": [],
                "parameters": self._parameters(
                    reading, found.row.name, found.row.cluster_id, found.row.project_id
                ),
                "outputs": self.outputs(who, found),
            }
        )
        return out

    def outputs(self, who: Principal, found: Found) -> list[dict[str, Any]]:
        """The stack's outputs: the cluster's, evaluated now; one Shoal cannot serve carries
        Heat's `output_error` with the reason."""
        reading = self.reading(found.row)
        template = found.row.body.get("template") or {}
        declared = template.get("outputs") if isinstance(template, dict) else None
        if not isinstance(declared, dict):
            return []
        served: dict[str, Any] = {}
        if found.cluster is not None and found.cluster.deleted_at is None:
            try:
                view = self.queries.cluster(who, found.cluster.id)
                served = {o.name: o for o in view.outputs or []}
            except ServiceError:
                served = {}
        skipped = {p.path.rsplit("/", 1)[-1]: p.message for p in reading.result.notices}
        out = []
        for key, decl in declared.items():
            d = decl if isinstance(decl, dict) else {}
            entry: dict[str, Any] = {
                "output_key": str(key),
                "description": str(d.get("description") or "No description given"),
            }
            got = served.get(str(key))
            if got is not None and got.status == "ready":
                entry["output_value"] = got.value
            elif str(key) in reading.result.outputs and got is None and str(key) not in skipped:
                entry["output_value"] = None
            else:
                entry["output_value"] = None
                entry["output_error"] = (
                    got.reason
                    if got is not None and got.reason
                    else skipped.get(str(key), "not known yet")
                )
            out.append(entry)
        return out

    def listing(
        self, who: Principal, query: list[tuple[str, str]], base: str
    ) -> list[dict[str, Any]]:
        params = list_query(query)
        everyone = who.is_admin and params.get("global_tenant", ["false"])[0].lower() == "true"
        with self.db.reading() as conn:
            rows = heat_repo.list_stacks(
                conn, None if everyone else who.project_id, MAX_STACKS_LISTED
            )
            latest = heat_repo.latest_actions(conn, [r.cluster_id for r in rows])
        items = [self.summary(Found(r, None, latest.get(r.cluster_id)), base) for r in rows]
        return paged(sorted_by(filtered(items, params), params), params)


def parameters_of(reading: Reading, name: str, stack_id: str, project: str) -> dict[str, Any]:
    """The parameters Heat shows: the template's values, then its pseudo parameters."""
    return {
        **reading.parameters,
        "OS::stack_id": stack_id,
        "OS::stack_name": name,
        "OS::project_id": project,
    }


def _validation(bad: Invalid) -> ServiceError:
    said = "; ".join(
        f"{d.get('path')}: {d.get('message')}" if d.get("path") else str(d.get("message"))
        for d in bad.details
    )
    return StackValidationFailed(said or bad.message)


def problems_of(reading: Reading) -> ServiceError:
    said = "; ".join(f"{p.path}: {p.message}" for p in reading.result.problems)
    return StackValidationFailed(said or "the template makes no stack")

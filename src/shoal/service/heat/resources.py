"""A stack's resources and events in Heat's shapes, read from its template and Shoal's actions.

Resources are the top template's (after conditions), each with the stack's current action and
status unless the resource itself says otherwise: a TestResource's `fail` (FAILED once its
wait is over), or a client's mark (`mark_unhealthy`: CHECK_FAILED and the reason, until the
next action). Marking a resource that makes nodes unhealthy asks Shoal to repair those nodes
(a recover of the cluster). Events are made from the stack's top-level actions: the stack's
IN_PROGRESS when an action began, each resource's, then each resource's and the stack's
COMPLETE or FAILED when it ended, so `openstack stack create --wait` sees the stack's own event.
What Shoal does on its own (a repair) is such an action too: a CHECK.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from shoal.service.heat.errors import EntityNotFound, HeatBadRequest, ResourceActionNotSupported
from shoal.service.heat.reading import Reading, ResourceDef
from shoal.service.heat.stacks import Found, HeatStacks
from shoal.service.heat.statuses import Knobs, Phase, heat_action, iso, knobs_of, phase_of
from shoal.store import heat as heat_repo
from shoal.store import nodes as node_repo
from shoal.store.heat import Mark
from shoal.store.records import Principal

MAX_EVENTS_ACTIONS = 200
"""Events are made from at most the stack's newest 200 actions."""
MAX_LIMIT = 1000
_NS = uuid.UUID("5d4c7a1e-38a0-4b8e-9e59-2f1f8a6c0d38")
_NODE_TYPES = ("OS::Nova::Server", "OS::Heat::ResourceGroup", "OS::Cinder::Volume")


def physical_id(stack_id: str, name: str) -> str:
    return str(uuid.uuid5(_NS, f"{stack_id}/{name}"))


@dataclass(frozen=True, slots=True)
class ResourceState:
    action: str
    status: str
    reason: str
    updated: float | None


class HeatResources:
    def __init__(self, stacks: HeatStacks) -> None:
        self.stacks = stacks

    def _state(self, found: Found, r: ResourceDef, marks: dict[str, Mark]) -> ResourceState:
        phase = self.stacks.phase(found)
        mark = marks.get(r.name)
        if mark is not None:
            return ResourceState("CHECK", mark.status.split("_", 1)[1], mark.reason, mark.at)
        if found.action is None:
            return ResourceState(phase.action, phase.status, phase.reason, None)
        props = self.stacks.reading(found.row).tests.get(r.name)
        knobs = knobs_of(props, phase.action) if props is not None else Knobs()
        own = phase_of(found.action, knobs, self.stacks.clock.now())
        reason = "state changed"
        if own.status == "FAILED" and knobs.fail:
            reason = f"ValueError: resources.{r.name}: Test Resource failed {r.name}"
        elif own.status == "FAILED":
            reason = own.reason
        return ResourceState(own.action, own.status, reason, own.ended or own.started)

    def _view(
        self, found: Found, r: ResourceDef, state: ResourceState, base: str, reading: Reading
    ) -> dict[str, Any]:
        row = found.row
        stack_href = f"{base}/stacks/{row.name}/{row.cluster_id}"
        return {
            "resource_name": r.name,
            "logical_resource_id": r.name,
            "physical_resource_id": physical_id(row.cluster_id, r.name)
            if state.action != "INIT"
            else "",
            "resource_type": r.type,
            "resource_status": f"{state.action}_{state.status}",
            "resource_status_reason": state.reason,
            "creation_time": iso(row.created_at),
            "updated_time": iso(state.updated or row.created_at),
            "required_by": [x.name for x in reading.resources if r.name in x.depends_on],
            "links": [
                {"href": f"{stack_href}/resources/{r.name}", "rel": "self"},
                {"href": stack_href, "rel": "stack"},
            ],
        }

    def listing(
        self, who: Principal, name: str, stack_id: str, query: dict[str, list[str]], base: str
    ) -> list[dict[str, Any]]:
        found = self.stacks.find(who, name, stack_id)
        reading = self.stacks.reading(found.row)
        with self.stacks.db.reading() as conn:
            marks = heat_repo.marks_of(conn, found.row.cluster_id)
        out = []
        for r in reading.resources:
            view = self._view(found, r, self._state(found, r, marks), base, reading)
            if _keep(view, query):
                out.append(view)
        return out

    def show(
        self, who: Principal, name: str, stack_id: str, resource: str, base: str
    ) -> dict[str, Any]:
        found = self.stacks.find(who, name, stack_id)
        reading = self.stacks.reading(found.row)
        r = reading.resource(resource)
        if r is None:
            raise EntityNotFound(f"The Resource ({resource}) could not be found.")
        with self.stacks.db.reading() as conn:
            marks = heat_repo.marks_of(conn, found.row.cluster_id)
        view = self._view(found, r, self._state(found, r, marks), base, reading)
        view["attributes"] = _attributes(r)
        view["description"] = r.description
        view["metadata"] = r.metadata
        return view

    def metadata(self, who: Principal, name: str, stack_id: str, resource: str) -> dict[str, Any]:
        found = self.stacks.find(who, name, stack_id)
        r = self.stacks.reading(found.row).resource(resource)
        if r is None:
            raise EntityNotFound(f"The Resource ({resource}) could not be found.")
        return r.metadata

    def mark(self, who: Principal, name: str, stack_id: str, resource: str, data: object) -> None:
        if not isinstance(data, dict):
            raise HeatBadRequest("The request body must be a JSON object")
        unknown = sorted(set(data) - {"mark_unhealthy", "resource_status_reason"})
        if unknown:
            raise HeatBadRequest(f"Invalid parameters {unknown}")
        flag = data.get("mark_unhealthy")
        if isinstance(flag, str) and flag.lower() in ("true", "false"):
            flag = flag.lower() == "true"
        if not isinstance(flag, bool):
            raise HeatBadRequest(
                "Unrecognized value for 'mark_unhealthy', acceptable values are: true, false."
            )
        reason = data.get("resource_status_reason", "")
        if not isinstance(reason, str) or len(reason) > 1024:
            raise HeatBadRequest("'resource_status_reason' is a text of at most 1024 characters")
        found = self.stacks.find(who, name, stack_id)
        r = self.stacks.reading(found.row).resource(resource)
        if r is None:
            raise EntityNotFound(f"The Resource ({resource}) could not be found.")
        now = self.stacks.clock.now()
        status = "CHECK_FAILED" if flag else "CHECK_COMPLETE"
        with self.stacks.db.transaction() as conn:
            heat_repo.set_mark(conn, found.row.cluster_id, Mark(r.name, status, reason, now))
            nodes = node_repo.list_nodes(conn, found.row.cluster_id) if flag else []
        if flag and r.type in _NODE_TYPES:
            # Shoal's repair: the nodes the resource made, recreated
            mine = [n.id for n in nodes if n.name == r.name or n.name.startswith(f"{r.name}-")]
            if mine:
                self.stacks.clusters.recover(who, found.row.cluster_id, mine)

    def signal(self, who: Principal, name: str, stack_id: str, resource: str) -> None:
        found = self.stacks.find(who, name, stack_id)
        r = self.stacks.reading(found.row).resource(resource)
        if r is None:
            raise EntityNotFound(f"The Resource ({resource}) could not be found.")
        raise ResourceActionNotSupported(
            f"Signal resource during SIGNAL is not supported: {r.name} ({r.type}) takes no signal"
        )

    # -- events -------------------------------------------------------------------------------

    def events(
        self,
        who: Principal,
        name: str,
        stack_id: str,
        query: dict[str, list[str]],
        base: str,
        resource: str | None = None,
    ) -> list[dict[str, Any]]:
        found = self.stacks.find(who, name, stack_id)
        reading = self.stacks.reading(found.row)
        if resource is not None and reading.resource(resource) is None:
            raise EntityNotFound(f"The Resource ({resource}) could not be found.")
        with self.stacks.db.reading() as conn:
            actions = heat_repo.stack_actions(conn, found.row.cluster_id, MAX_EVENTS_ACTIONS)
        now = self.stacks.clock.now()
        made: list[dict[str, Any]] = []
        stack_href = f"{base}/stacks/{found.row.name}/{found.row.cluster_id}"
        for a in actions:
            knobs = reading.knobs(heat_action(a.kind))
            phase = phase_of(a, knobs, now)
            made.extend(self._action_events(found, reading, a.id, phase, stack_href))
        if resource is not None:
            made = [e for e in made if e["resource_name"] == resource]
        made = [e for e in made if _keep(e, query)]
        return _page(made, query)

    def _action_events(
        self, found: Found, reading: Reading, action_id: str, phase: Phase, href: str
    ) -> list[dict[str, Any]]:
        row = found.row
        out = [
            _event(
                row.name,
                row.cluster_id,
                "OS::Heat::Stack",
                row.name,
                phase.action,
                "IN_PROGRESS",
                f"Stack {phase.action} started",
                phase.started,
                action_id,
                href,
            )
        ]
        for r in reading.resources:
            out.append(
                _event(
                    r.name,
                    physical_id(row.cluster_id, r.name),
                    r.type,
                    row.name,
                    phase.action,
                    "IN_PROGRESS",
                    "state changed",
                    phase.started,
                    action_id,
                    href,
                )
            )
        if phase.ended is None or phase.status == "IN_PROGRESS":
            return out
        for r in reading.resources:
            props = reading.tests.get(r.name)
            knobs = knobs_of(props, phase.action) if props is not None else Knobs()
            failed = phase.status == "FAILED" and (knobs.fail or not reading.tests)
            out.append(
                _event(
                    r.name,
                    physical_id(row.cluster_id, r.name),
                    r.type,
                    row.name,
                    phase.action,
                    "FAILED" if failed else "COMPLETE",
                    "Test Resource failed" if failed and knobs.fail else "state changed",
                    phase.ended,
                    action_id,
                    href,
                )
            )
        out.append(
            _event(
                row.name,
                row.cluster_id,
                "OS::Heat::Stack",
                row.name,
                phase.action,
                phase.status,
                phase.reason,
                phase.ended,
                action_id,
                href,
            )
        )
        return out


def _event(
    rname: str,
    physical: str,
    rtype: str,
    stack: str,
    action: str,
    status: str,
    reason: str,
    at: float,
    action_id: str,
    href: str,
) -> dict[str, Any]:
    eid = str(uuid.uuid5(_NS, f"{action_id}/{rname}/{status}"))
    return {
        "id": eid,
        "event_time": iso(at),
        "resource_name": rname,
        "logical_resource_id": rname,
        "physical_resource_id": physical,
        "resource_type": rtype,
        "resource_status": f"{action}_{status}",
        "resource_status_reason": reason,
        "links": [
            {"href": f"{href}/resources/{rname}/events/{eid}", "rel": "self"},
            {"href": f"{href}/resources/{rname}", "rel": "resource"},
            {"href": href, "rel": "stack"},
        ],
        "_at": at,
        "_stack": stack,
    }


def _attributes(r: ResourceDef) -> dict[str, Any]:
    if r.type == "OS::Heat::TestResource":
        return {"output": r.props.get("value", "test_string")}
    if r.type == "OS::Heat::Value":
        return {"value": r.props.get("value")}
    return {}


_FILTERS = {
    "type": "resource_type",
    "resource_type": "resource_type",
    "name": "resource_name",
    "resource_name": "resource_name",
    "status": "resource_status",
    "resource_status": "resource_status",
    "action": "resource_status",
    "resource_action": "resource_status",
    "id": "physical_resource_id",
    "physical_resource_id": "physical_resource_id",
}


def _keep(item: dict[str, Any], query: dict[str, list[str]]) -> bool:
    for key, values in query.items():
        field = _FILTERS.get(key)
        if field is None:
            continue
        value = str(item.get(field, ""))
        if key in ("action", "resource_action"):
            value = value.split("_", 1)[0]
        elif key in ("status", "resource_status") and value.count("_"):
            if not any(v in (value, value.split("_", 1)[1]) for v in values):
                return False
            continue
        if value not in values:
            return False
    return True


def _page(events: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
    direction = query.get("sort_dir", ["asc"])[0]
    if direction not in ("asc", "desc"):
        raise HeatBadRequest(f"Unknown sort direction, must be 'desc' or 'asc': {direction}")
    events = sorted(events, key=lambda e: e["_at"])  # stable: made in order
    if direction == "desc":
        events.reverse()
    if "marker" in query:
        marker = query["marker"][0]
        at = next((i for i, e in enumerate(events) if e["id"] == marker), None)
        if at is None:
            raise EntityNotFound(f"The Event ({marker}) could not be found.")
        events = events[at + 1 :]
    limit = MAX_LIMIT
    if "limit" in query:
        try:
            limit = min(int(query["limit"][0]), MAX_LIMIT)
        except ValueError:
            raise HeatBadRequest("Only integer is acceptable by 'limit'.") from None
    for e in events:
        e.pop("_at", None)
        e.pop("_stack", None)
    return events[: max(limit, 0)]

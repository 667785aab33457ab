"""Heat's dry runs: validate a template, preview a stack's create, preview an update's
resource changes. Nothing is recorded; the template is read as a create would read it."""

from __future__ import annotations

from typing import Any

from shoal.service.heat import bodies
from shoal.service.heat.bodies import StackBody
from shoal.service.heat.errors import HeatBadRequest, StackValidationFailed
from shoal.service.heat.reading import read_stack
from shoal.service.heat.stacks import HeatStacks, parameters_of, problems_of
from shoal.service.heat.statuses import iso
from shoal.store.heat import StackRow
from shoal.store.records import Principal


class HeatPreviews:
    def __init__(self, stacks: HeatStacks) -> None:
        self.stacks = stacks
        self.clock = stacks.clock

    def validate(self, data: object) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise HeatBadRequest("The request body must be a JSON object")
        hot = bodies.hot_parts(data)
        reading = read_stack({"stack_name": "validate", **hot}, self.stacks.inventory())
        template = hot["template"]
        declared = (
            template.get("parameters") if isinstance(template.get("parameters"), dict) else {}
        )
        # Heat validates a template without its parameters' values: one with none is no problem
        unset = {
            f"/template/parameters/{n}"
            for n, d in (declared or {}).items()
            if reading.parameters.get(str(n)) in (None, "")
            and not (isinstance(d, dict) and "default" in d)
        }
        problems = [p for p in reading.result.problems if p.path not in unset]
        if problems:
            raise StackValidationFailed("; ".join(f"{p.path}: {p.message}" for p in problems))
        params = {}
        for pname, decl in (declared or {}).items():
            d = decl if isinstance(decl, dict) else {}
            shown: dict[str, Any] = {
                "Type": str(d.get("type", "string"))
                .capitalize()
                .replace("Comma_delimited_list", "CommaDelimitedList"),
                "Description": str(d.get("description", "")),
                "Label": str(d.get("label", pname)),
                "NoEcho": "true" if d.get("hidden") is True else "false",
            }
            if "default" in d:
                shown["Default"] = d["default"]
            if pname in reading.parameters and pname not in reading.hidden:
                shown["Value"] = reading.parameters[pname]
            params[str(pname)] = shown
        out: dict[str, Any] = {"Description": reading.description, "Parameters": params}
        if isinstance(template.get("parameter_groups"), list):
            out["ParameterGroups"] = template["parameter_groups"]
        return out

    def preview(self, who: Principal, data: object) -> dict[str, Any]:
        body = bodies.create_body(data)
        reading = read_stack(body.reader_body(), self.stacks.inventory())
        if reading.result.spec is None:
            raise problems_of(reading)
        stack_id = "None"
        now = iso(self.clock.now())
        resources = [
            {
                "resource_name": r.name,
                "resource_type": r.type,
                "resource_action": "INIT",
                "resource_status": "COMPLETE",
                "resource_status_reason": "",
                "resource_identity": {
                    "stack_name": body.name,
                    "stack_id": stack_id,
                    "tenant": who.project_id,
                    "path": f"/resources/{r.name}",
                },
                "stack_identity": {
                    "stack_name": body.name,
                    "stack_id": stack_id,
                    "tenant": who.project_id,
                    "path": "",
                },
                "physical_resource_id": "",
                "properties": r.props,
                "description": r.description,
                "metadata": r.metadata,
                "required_by": [x.name for x in reading.resources if r.name in x.depends_on],
                "updated_time": now,
                "creation_time": now,
            }
            for r in reading.resources
        ]
        return {
            "stack": {
                "stack_name": body.name,
                "id": stack_id,
                "description": reading.description,
                "template_description": reading.description,
                "parameters": parameters_of(reading, body.name, stack_id, who.project_id),
                "disable_rollback": body.disable_rollback,
                "timeout_mins": body.timeout_mins,
                "creation_time": now,
                "updated_time": None,
                "deletion_time": None,
                "stack_owner": None,
                "parent": None,
                "links": [],
                "capabilities": [],
                "notification_topics": [],
                "resources": resources,
            }
        }

    def preview_update(
        self, who: Principal, name: str, stack_id: str, data: object, *, patch: bool
    ) -> dict[str, Any]:
        found = self.stacks.find(who, name, stack_id)
        before = StackBody(
            found.row.name,
            found.row.body,
            found.row.disable_rollback,
            found.row.timeout_mins,
            found.row.tags,
        )
        body = bodies.update_body(data, before, patch=patch)
        old = self.stacks.reading(found.row)
        new = read_stack(body.reader_body(), self.stacks.inventory())
        if new.result.spec is None:
            raise problems_of(new)
        changes: dict[str, list[dict[str, Any]]] = {
            k: [] for k in ("added", "deleted", "replaced", "unchanged", "updated")
        }
        for r in new.resources:
            was = old.resource(r.name)
            kind = (
                "added"
                if was is None
                else (
                    "replaced"
                    if was.type != r.type
                    else "unchanged"
                    if was.props == r.props
                    else "updated"
                )
            )
            changes[kind].append(self._change(r.name, r.type, found.row, who))
        for r in old.resources:
            if new.resource(r.name) is None:
                changes["deleted"].append(self._change(r.name, r.type, found.row, who))
        return {"resource_changes": changes}

    @staticmethod
    def _change(rname: str, rtype: str, row: StackRow, who: Principal) -> dict[str, Any]:
        return {
            "resource_name": rname,
            "resource_type": rtype,
            "resource_identity": {
                "stack_name": row.name,
                "stack_id": row.cluster_id,
                "tenant": row.project_id,
                "path": f"/resources/{rname}",
            },
            "stack_identity": {
                "stack_name": row.name,
                "stack_id": row.cluster_id,
                "tenant": row.project_id,
                "path": "",
            },
        }

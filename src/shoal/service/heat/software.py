"""Heat's standalone software configs and deployments (`/software_configs`,
`/software_deployments`), kept as given for clients and agents to read.

These are Heat's API objects made outside any template (os-collect-config reads a server's
through `/software_deployments/metadata/{server_id}`). Shoal's own deployments, those of a
cluster's template, are run by its engine and served to its agents on Shoal's own routes
(docs/software.md); these are only stored, bounded per project and in size.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from shoal.clock import Clock
from shoal.service.errors import Conflict
from shoal.service.heat.errors import EntityNotFound, HeatBadRequest
from shoal.service.heat.statuses import iso
from shoal.store import heat as heat_repo
from shoal.store.database import Database
from shoal.store.heat import ConfigRow, DeploymentRow
from shoal.store.records import Principal

MAX_CONFIGS = 10_000
MAX_DEPLOYMENTS = 10_000
"""Per project (Heat has no such bound; every count in Shoal has one)."""
MAX_CONFIG_BYTES = 524_288
"""A config's text, as Heat's `max_template_size`."""
MAX_VALUES_BYTES = 65_536
"""A deployment's input or output values, as JSON."""
MAX_LIMIT = 1000
_CONFIG_KEYS = {"name", "group", "config", "inputs", "outputs", "options"}
_DEPLOYMENT_KEYS = {
    "config_id",
    "server_id",
    "action",
    "status",
    "status_reason",
    "input_values",
    "output_values",
    "stack_user_project_id",
}


def _text(data: dict[str, Any], key: str, default: str, most: int = 255) -> str:
    value = data.get(key, default)
    if value is None:
        value = default
    if not isinstance(value, str) or len(value) > most:
        raise HeatBadRequest(f"'{key}' is a text of at most {most} characters")
    return value


def _mapping(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise HeatBadRequest(f"'{key}' is a mapping")
    if len(json.dumps(value)) > MAX_VALUES_BYTES:
        raise HeatBadRequest(f"'{key}' is over {MAX_VALUES_BYTES} bytes as JSON")
    return value


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list) or len(json.dumps(value)) > MAX_VALUES_BYTES:
        raise HeatBadRequest(f"'{key}' is a list of at most {MAX_VALUES_BYTES} bytes as JSON")
    return value


def _object(data: object, known: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise HeatBadRequest("The request body must be a JSON object")
    unknown = sorted(set(data) - known)
    if unknown:
        raise HeatBadRequest(f"Unknown fields: {', '.join(unknown)}")
    return data


def config_view(c: ConfigRow, *, full: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": c.id,
        "name": c.name,
        "group": c.group,
        "creation_time": iso(c.created_at),
        "project": c.project_id,
    }
    if full:
        out.update(
            config=c.config,
            inputs=c.details.get("inputs", []),
            outputs=c.details.get("outputs", []),
            options=c.details.get("options", {}),
        )
    return out


def deployment_view(d: DeploymentRow) -> dict[str, Any]:
    return {
        "id": d.id,
        "config_id": d.config_id,
        "server_id": d.server_id,
        "action": d.action,
        "status": d.status,
        "status_reason": d.status_reason,
        "input_values": d.input_values,
        "output_values": d.output_values,
        "creation_time": iso(d.created_at),
        "updated_time": iso(d.updated_at),
    }


class HeatSoftware:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    @staticmethod
    def _scope(who: Principal) -> str | None:
        return None if who.is_admin else who.project_id

    def create_config(self, who: Principal, data: object) -> ConfigRow:
        body = _object(data, _CONFIG_KEYS)
        config = body.get("config") or ""
        if not isinstance(config, str):
            config = json.dumps(config)
        if len(config.encode()) > MAX_CONFIG_BYTES:
            raise HeatBadRequest(f"'config' is over {MAX_CONFIG_BYTES} bytes")
        row = ConfigRow(
            str(uuid.uuid4()),
            who.project_id,
            _text(body, "name", ""),
            _text(body, "group", "Heat::Ungrouped"),
            config,
            {
                "inputs": _list(body, "inputs"),
                "outputs": _list(body, "outputs"),
                "options": _mapping(body, "options"),
            },
            self.clock.now(),
        )
        with self.db.transaction() as conn:
            if heat_repo.count_configs(conn, who.project_id) >= MAX_CONFIGS:
                raise Conflict(f"a project keeps at most {MAX_CONFIGS} software configs")
            heat_repo.put_config(conn, row)
        return row

    def config(self, who: Principal, config_id: str) -> ConfigRow:
        with self.db.reading() as conn:
            found = heat_repo.get_config(conn, config_id, self._scope(who))
        if found is None:
            raise EntityNotFound(f"The Software Config ({config_id}) could not be found.")
        return found

    def configs(self, who: Principal, limit: int | None) -> list[ConfigRow]:
        with self.db.reading() as conn:
            return heat_repo.list_configs(
                conn, self._scope(who), min(limit if limit is not None else MAX_LIMIT, MAX_LIMIT)
            )

    def delete_config(self, who: Principal, config_id: str) -> None:
        self.config(who, config_id)
        with self.db.transaction() as conn:
            heat_repo.delete_config(conn, config_id)

    def create_deployment(self, who: Principal, data: object) -> DeploymentRow:
        body = _object(data, _DEPLOYMENT_KEYS)
        config_id = _text(body, "config_id", "")
        server_id = _text(body, "server_id", "")
        if not config_id or not server_id:
            raise HeatBadRequest("'config_id' and 'server_id' are required")
        self.config(who, config_id)
        now = self.clock.now()
        row = DeploymentRow(
            str(uuid.uuid4()),
            who.project_id,
            config_id,
            server_id,
            _text(body, "action", "INIT"),
            _text(body, "status", "COMPLETE"),
            _text(body, "status_reason", "", 1024),
            _mapping(body, "input_values"),
            _mapping(body, "output_values"),
            now,
            None,
        )
        with self.db.transaction() as conn:
            if heat_repo.count_deployments(conn, who.project_id) >= MAX_DEPLOYMENTS:
                raise Conflict(f"a project keeps at most {MAX_DEPLOYMENTS} software deployments")
            heat_repo.put_deployment(conn, row)
        return row

    def deployment(self, who: Principal, deployment_id: str) -> DeploymentRow:
        with self.db.reading() as conn:
            found = heat_repo.get_deployment(conn, deployment_id, self._scope(who))
        if found is None:
            raise EntityNotFound(f"The Software Deployment ({deployment_id}) could not be found.")
        return found

    def deployments(self, who: Principal, server_id: str | None) -> list[DeploymentRow]:
        with self.db.reading() as conn:
            return heat_repo.list_deployments(conn, self._scope(who), server_id, MAX_LIMIT)

    def update_deployment(self, who: Principal, deployment_id: str, data: object) -> DeploymentRow:
        body = _object(data, _DEPLOYMENT_KEYS)
        d = self.deployment(who, deployment_id)
        config_id = _text(body, "config_id", d.config_id)
        if config_id != d.config_id:
            self.config(who, config_id)
        row = DeploymentRow(
            d.id,
            d.project_id,
            config_id,
            d.server_id,
            _text(body, "action", d.action),
            _text(body, "status", d.status),
            _text(body, "status_reason", d.status_reason, 1024),
            _mapping(body, "input_values") if "input_values" in body else d.input_values,
            _mapping(body, "output_values") if "output_values" in body else d.output_values,
            d.created_at,
            self.clock.now(),
        )
        with self.db.transaction() as conn:
            heat_repo.put_deployment(conn, row)
        return row

    def delete_deployment(self, who: Principal, deployment_id: str) -> None:
        self.deployment(who, deployment_id)
        with self.db.transaction() as conn:
            heat_repo.delete_deployment(conn, deployment_id)

    def metadata(self, who: Principal, server_id: str) -> list[dict[str, Any]]:
        """What os-collect-config reads for a server: each deployment's config with the
        deployment's input values (Heat's derived config), ordered by config name."""
        found = self.deployments(who, server_id)
        with self.db.reading() as conn:
            configs = heat_repo.get_configs(conn, [d.config_id for d in found])
        out = []
        for d in found:
            c = configs.get(d.config_id)
            if c is None:
                continue
            inputs = [dict(i) for i in c.details.get("inputs", []) if isinstance(i, dict)]
            for i in inputs:
                if i.get("name") in d.input_values:
                    i["value"] = d.input_values[i["name"]]
            out.append(
                {
                    "id": c.id,
                    "name": c.name,
                    "group": c.group,
                    "config": c.config,
                    "inputs": inputs,
                    "outputs": c.details.get("outputs", []),
                    "options": c.details.get("options", {}),
                    "creation_time": iso(c.created_at),
                    "updated_time": iso(d.updated_at or d.created_at),
                }
            )
        return sorted(out, key=lambda m: (m["name"], m["creation_time"] or ""))

"""Senlin policy objects: created, listed, renamed and deleted on their own, then attached to
clusters. Shoal has no table of its own for them, so they are kept among a project's stored
profiles, named `senlin-policy:<name>` with their Senlin type (`senlin.policy.deletion-1.1`);
the façade's profile views leave them out."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, update

from shoal.clock import Clock
from shoal.service.errors import Conflict, NotFound
from shoal.service.senlin import meta
from shoal.service.senlin.errors import BadRequest, ResourceInUse
from shoal.service.senlin.policies import CheckedPolicy, parse_policy_spec
from shoal.service.senlin.shortid import by_short_id
from shoal.service.senlin.views import isotime
from shoal.store import clusters as cluster_repo
from shoal.store import profiles as repo
from shoal.store.database import Database
from shoal.store.errors import NameTaken
from shoal.store.records import Principal
from shoal.store.tables import profiles as profiles_table

NAME_PREFIX = "senlin-policy:"
TYPE_PREFIX = "senlin.policy."


def is_policy_row(row: dict[str, Any]) -> bool:
    return str(row.get("type", "")).startswith(TYPE_PREFIX)


def checked_of(row: dict[str, Any]) -> CheckedPolicy:
    return CheckedPolicy(row["type"], row["spec"]["senlin"]["spec"])


def policy_view(row: dict[str, Any]) -> dict[str, Any]:
    env = row["spec"]["senlin"]
    created = row.get("created_at")
    return {
        "id": row["id"],
        "name": str(row["name"]).removeprefix(NAME_PREFIX),
        "type": row["type"],
        "spec": env["spec"],
        "data": {},
        "project": row.get("project_id"),
        "user": None,
        "domain": None,
        "created_at": isotime(created) if isinstance(created, int | float) else None,
        "updated_at": isotime(env.get("updated_at")),
    }


def _name(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise BadRequest("A policy needs a name: a non-empty string of at most 200 characters.")
    return value


class SenlinPolicies:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def row(self, conn: Connection, who: Principal, ref: str) -> dict[str, Any]:
        for key in (ref, NAME_PREFIX + ref):
            found = repo.get_profile(conn, who.project_id, key)
            if found is not None and is_policy_row(found):
                return found
        rows = {r["id"]: r for r in repo.list_profiles(conn, who.project_id) if is_policy_row(r)}
        short = by_short_id(rows, ref)
        if short is not None:
            return rows[short]
        raise NotFound(f"The policy '{ref}' could not be found.")

    def list(self, who: Principal) -> list[dict[str, Any]]:
        with self.db.reading() as conn:
            rows = repo.list_profiles(conn, who.project_id)
        return [policy_view(r) for r in rows if is_policy_row(r)]

    def get(self, who: Principal, ref: str) -> dict[str, Any]:
        with self.db.reading() as conn:
            return policy_view(self.row(conn, who, ref))

    def validate(self, who: Principal, body: dict[str, Any]) -> dict[str, Any]:
        checked = parse_policy_spec(body.get("spec"))
        row = {
            "id": None,
            "name": "validated_policy",
            "type": checked.type_name,
            "spec": {"senlin": {"spec": checked.spec}},
            "project_id": who.project_id,
        }
        return policy_view(row)

    def create(self, who: Principal, body: dict[str, Any]) -> dict[str, Any]:
        name = _name(body.get("name"))
        checked = parse_policy_spec(body.get("spec"))
        stored = {"senlin": {"spec": checked.spec, "updated_at": None}}
        with self.db.transaction() as conn:
            try:
                row = repo.create_profile(
                    conn,
                    who.project_id,
                    NAME_PREFIX + name,
                    checked.type_name,
                    stored,
                    self.clock.now(),
                )
            except NameTaken:
                raise Conflict(f"A policy named '{name}' already exists.") from None
        return policy_view(row)

    def update(self, who: Principal, ref: str, body: dict[str, Any]) -> dict[str, Any]:
        if "spec" in body:
            raise BadRequest("Updating the spec of a policy is not supported.")
        if set(body) != {"name"}:
            raise BadRequest("Only the name of a policy can be updated.")
        name = _name(body["name"])
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            if repo.get_profile(conn, who.project_id, NAME_PREFIX + name) not in (None, row):
                raise Conflict(f"A policy named '{name}' already exists.")
            env = dict(row["spec"]["senlin"], updated_at=self.clock.now())
            conn.execute(
                update(profiles_table)
                .where(profiles_table.c.id == row["id"])
                .values(name=NAME_PREFIX + name, spec={"senlin": env})
            )
            return policy_view(self.row(conn, who, row["id"]))

    def delete(self, who: Principal, ref: str) -> None:
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            users = [
                c.name
                for c in cluster_repo.list_clusters(conn, who.project_id)
                if any(
                    p.get("policy_id") == row["id"]
                    for p in meta.decode(c.document.get("metadata", {})).policies
                )
            ]
            if users:
                raise ResourceInUse(
                    f"The policy '{ref}' cannot be deleted: still attached to some clusters "
                    f"({', '.join(users)})."
                )
            repo.delete_profile(conn, who.project_id, row["id"])

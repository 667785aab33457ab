"""Senlin policy objects: created, listed, renamed and deleted on their own, then attached to
clusters. They live in their own table (`store/senlin_policies.py`), so the native API never
shows them among profiles; names may repeat, as in Senlin."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from shoal.clock import Clock
from shoal.service.errors import NotFound
from shoal.service.senlin import meta
from shoal.service.senlin.bodies import check_name
from shoal.service.senlin.errors import BadRequest, InvalidSpec, ResourceInUse
from shoal.service.senlin.policies import CheckedPolicy, parse_policy_spec
from shoal.service.senlin.shapes import JsonObject, PolicyView
from shoal.service.senlin.views import isotime
from shoal.store import clusters as cluster_repo
from shoal.store import senlin_lists as list_repo
from shoal.store import senlin_policies as repo
from shoal.store.database import Database
from shoal.store.records import Principal
from shoal.store.senlin_conn import Conn
from shoal.store.senlin_lists import ListQuery

TYPE_PREFIX = "senlin.policy."
T = TypeVar("T")


def checked_of(p: repo.PolicyRecord) -> CheckedPolicy:
    return CheckedPolicy(p.type, p.spec)


def _view(
    pid: str | None,
    name: str,
    type_name: str,
    spec: JsonObject,
    project: str,
    created_at: float | None,
    updated_at: float | None,
) -> PolicyView:
    return {
        "id": pid,
        "name": name,
        "type": type_name,
        "spec": spec,
        "data": {},
        "project": project,
        "user": None,
        "domain": None,
        "created_at": isotime(created_at) if created_at is not None else None,
        "updated_at": isotime(updated_at),
    }


def policy_view(p: repo.PolicyRecord) -> PolicyView:
    """Senlin's view of a stored policy."""
    return _view(p.id, p.name, p.type, p.spec, p.project_id, p.created_at, p.updated_at)


def _name(value: object) -> str:
    return check_name("policy", value)


def one(found: Sequence[T], ref: str, kind: str) -> T:
    """The single match of a lookup, or Senlin's 404 / 'Multiple results' 400."""
    if not found:
        raise NotFound(f"The {kind} '{ref}' could not be found.")
    if len(found) > 1:
        raise BadRequest(
            f"Multiple results found matching the query criteria '{ref}'. Please be more specific."
        )
    return found[0]


class SenlinPolicies:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def row(self, conn: Conn, who: Principal, ref: str) -> repo.PolicyRecord:
        return one(repo.find_policies(conn, who.project_id, ref), ref, "policy")

    def page(self, who: Principal, query: ListQuery) -> list[PolicyView]:
        """One page of Senlin's policy list, filtered, sorted and paged in SQL."""
        with self.db.reading() as conn:
            try:
                found = list_repo.list_policies(conn, query)
            except list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{query.marker}' could not be found.") from None
            return [policy_view(p) for p in found]

    def get(self, who: Principal, ref: str) -> PolicyView:
        with self.db.reading() as conn:
            return policy_view(self.row(conn, who, ref))

    def validate(self, who: Principal, body: JsonObject) -> PolicyView:
        checked = parse_policy_spec(body.get("spec"))
        return _view(
            None, "validated_policy", checked.type_name, checked.spec, who.project_id, None, None
        )

    def create(self, who: Principal, body: JsonObject) -> PolicyView:
        name = _name(body.get("name"))
        try:
            checked = parse_policy_spec(body.get("spec"))
        except InvalidSpec as bad:
            raise BadRequest(f"Failed in creating policy {name}: {bad.message}") from None
        with self.db.transaction() as conn:
            p = repo.create_policy(
                conn, who.project_id, name, checked.type_name, checked.spec, self.clock.now()
            )
        return policy_view(p)

    def update(self, who: Principal, ref: str, body: JsonObject) -> PolicyView:
        name = _name(body["name"])
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            repo.rename_policy(conn, row.id, name, self.clock.now())
            return policy_view(self.row(conn, who, row.id))

    def delete(self, who: Principal, ref: str) -> None:
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            users = [
                c.name
                for c in cluster_repo.list_clusters(conn, who.project_id)
                if any(
                    b.policy_id == row.id
                    for b in meta.decode(c.document.get("metadata", {})).policies
                )
            ]
            if users:
                raise ResourceInUse(
                    f"The policy '{ref}' cannot be deleted: still attached to some clusters."
                )
            repo.delete_policy(conn, row.id)

"""Stored profiles: a project's named server and volume profiles, validated like documents.

Node groups and instances added through the API (`nodegroups`, `add_nodes`) may name a stored
profile instead of spelling one out; it is copied in, so a cluster never changes because a
stored profile did.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import JsonValue

from shoal.clock import Clock
from shoal.documents import cluster_from_tree
from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument, Problem
from shoal.service.errors import Conflict, Invalid, NotFound
from shoal.service.views import JsonObject, View, iso
from shoal.store import profiles as repo
from shoal.store.database import Database
from shoal.store.errors import NameTaken
from shoal.store.records import Principal

_PROBE = "profile-check"


def validate_profile(name: str, spec: JsonObject, inventory: Inventory) -> None:
    """Refuse a profile the cluster format would refuse, with pointers into the profile."""
    doc = {
        "name": _PROBE,
        "profiles": {name: spec},
        "instances": [{"name": "probe", "profile": name}],
    }
    try:
        cluster_from_tree(doc, inventory)
    except InvalidDocument as bad:
        prefix = f"/profiles/{name}"
        details = [
            Problem(p.path[len(prefix) :] if p.path.startswith(prefix) else "", p.message)
            for p in bad.problems
        ]
        raise Invalid(f"profile {name} has {len(details)} problem(s)", details) from None


class ProfileView(View):
    """A stored profile as the native API answers it (`/v1/profiles`)."""

    id: str
    name: str
    type: str
    spec: JsonObject
    project: str
    created_at: str | None


def profile_view(row: Mapping[str, Any]) -> ProfileView:
    """A row of `store/profiles.py` (the store answers profiles as plain rows)."""
    return ProfileView(
        id=row["id"],
        name=row["name"],
        type=row["type"],
        spec=row["spec"],
        project=row["project_id"],
        created_at=iso(row["created_at"]),
    )


class ProfileService:
    def __init__(self, db: Database, inventory: Callable[[], Inventory], clock: Clock) -> None:
        self.db = db
        self.inventory = inventory
        self.clock = clock

    def create(self, who: Principal, body: JsonObject) -> ProfileView:
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise Invalid("a profile needs a name", [Problem("/name", "required")])
        spec = {k: v for k, v in body.items() if k != "name"}
        validate_profile(name, spec, self.inventory())
        with self.db.transaction() as conn:
            try:
                row = repo.create_profile(
                    conn, who.project_id, name, str(spec.get("type")), spec, self.clock.now()
                )
            except NameTaken as e:
                raise Conflict(str(e), [Problem("/name", str(e))]) from None
        return profile_view(row)

    def list(self, who: Principal) -> list[ProfileView]:
        with self.db.reading() as conn:
            return [profile_view(r) for r in repo.list_profiles(conn, who.project_id)]

    def get(self, who: Principal, ref: str) -> ProfileView:
        with self.db.reading() as conn:
            row = repo.get_profile(conn, who.project_id, ref)
        if row is None:
            raise NotFound(f"no profile {ref!r}")
        return profile_view(row)

    def delete(self, who: Principal, ref: str) -> None:
        with self.db.transaction() as conn:
            if not repo.delete_profile(conn, who.project_id, ref):
                raise NotFound(f"no profile {ref!r}")

    def inline(self, who: Principal, item: JsonObject) -> JsonObject:
        """`item` (a node group or instance) with stored-profile names replaced by copies."""
        out = copy.deepcopy(item)
        with self.db.reading() as conn:

            def resolve(value: JsonValue) -> JsonValue:
                if isinstance(value, str):
                    row = repo.get_profile(conn, who.project_id, value)
                    if row is not None:
                        spec: JsonObject = copy.deepcopy(row["spec"])
                        return spec
                return value

            if "profile" in out:
                out["profile"] = resolve(out["profile"])
            unit = out.get("unit")
            if isinstance(unit, dict):
                out["unit"] = {k: resolve(v) for k, v in unit.items()}
        return out

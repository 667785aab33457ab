"""Senlin profiles over Shoal's stored profiles.

A profile created through the façade is stored with its Senlin type name (`os.nova.server-1.0`)
and an envelope `{"senlin": {"spec", "metadata", "updated_at"}}`, so showing it gives back the
spec exactly as it was given. Profiles created natively (type `server` or `volume`) are shown as
`shoal.server-1.0` / `shoal.volume-1.0`. Either kind can back a Senlin cluster:
`SenlinProfiles.native` gives the native profile a node group is built from (an `os.heat.stack`
profile's: its template's one server, read by the HOT reader, `stacks.py`).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shoal.clock import Clock
from shoal.model.inventory import Inventory
from shoal.service.senlin import meta
from shoal.service.senlin.bodies import check_name
from shoal.service.senlin.errors import BadRequest, InvalidSpec, ResourceInUse
from shoal.service.senlin.policy_store import one
from shoal.service.senlin.specs import (
    HEAT_STACK,
    NATIVE_VOLUME_KINDS,
    PROFILE_TYPES,
    SHOAL_SERVER,
    SHOAL_VOLUME,
    SenlinSpec,
    parse_spec,
    spec_of_native,
    to_native,
)
from shoal.service.senlin.stacks import StackReading, read_stack
from shoal.service.senlin.views import profile_view
from shoal.store import clusters as cluster_repo
from shoal.store import profiles as repo
from shoal.store import senlin_lists as list_repo
from shoal.store.database import Database
from shoal.store.records import Principal
from shoal.store.senlin_conn import Conn

ENVELOPE = "senlin"

NAMING = list_repo.ProfileNaming(
    envelope=ENVELOPE,
    senlin_types=tuple(PROFILE_TYPES),
    native_types={k: SHOAL_VOLUME for k in NATIVE_VOLUME_KINDS},
    native_default=SHOAL_SERVER,
)
"""How the store's profile list names what `senlin_parts` and `senlin_name` show."""


def is_envelope(row: dict[str, Any]) -> bool:
    spec = row.get("spec")
    return row.get("type") in PROFILE_TYPES and isinstance(spec, dict) and ENVELOPE in spec


def senlin_parts(row: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any], float | None]:
    """A stored profile as Senlin sees it: type name, spec, metadata, updated_at."""
    if is_envelope(row):
        env = row["spec"][ENVELOPE]
        return row["type"], env["spec"], dict(env.get("metadata") or {}), env.get("updated_at")
    type_name, spec = spec_of_native(row["spec"])
    return type_name, spec, {}, None


def senlin_name(row: dict[str, Any]) -> str:
    """The name Senlin clients know a profile by (stored under another when it repeats)."""
    if is_envelope(row):
        return str(row["spec"][ENVELOPE].get("name") or row["name"])
    return str(row["name"])


@dataclass(frozen=True, slots=True)
class SenlinProfile:
    """A stored profile as the façade reads it, built once from the store's row: what Senlin
    shows (name, type, spec, metadata) beside what Shoal stored (`stored_name`, `stored_type`,
    `stored_spec`, from which `native_of` builds a node group's profile)."""

    id: str
    name: str
    type_name: str
    spec: dict[str, Any]
    metadata: dict[str, Any]
    updated_at: float | None
    stored_name: str
    stored_type: str
    stored_spec: dict[str, Any]
    project_id: str | None
    created_at: float | None

    @property
    def envelope(self) -> bool:
        """Made through the façade (its spec kept as Senlin was given it)."""
        return self.stored_type in PROFILE_TYPES and ENVELOPE in self.stored_spec

    @property
    def properties(self) -> dict[str, Any]:
        """A façade-made profile's spec properties ({} for a native profile)."""
        return dict(self.spec.get("properties") or {}) if self.envelope else {}


def profile_of(row: dict[str, Any]) -> SenlinProfile:
    """The façade's reading of a store row (`store/profiles.py`)."""
    type_name, spec, metadata, updated_at = senlin_parts(row)
    created = row.get("created_at")
    return SenlinProfile(
        id=str(row["id"]),
        name=senlin_name(row),
        type_name=type_name,
        spec=spec,
        metadata=metadata,
        updated_at=updated_at,
        stored_name=str(row["name"]),
        stored_type=str(row["type"]),
        stored_spec=dict(row["spec"]),
        project_id=row.get("project_id"),
        created_at=float(created) if isinstance(created, int | float) else None,
    )


def _stored_name(conn: Conn, project_id: str, name: str) -> str:
    """`name`, or a unique variant of it: Senlin lets profile names repeat, Shoal does not."""
    if repo.get_profile(conn, project_id, name) is None:
        return name
    return f"{name[:200]}~{uuid.uuid4().hex[:8]}"


def native_of(p: SenlinProfile) -> dict[str, Any]:
    """The native profile a stored profile (either kind, not a heat stack) stands for."""
    if p.envelope:
        return to_native(p.stored_type, p.properties)
    return copy.deepcopy(p.stored_spec)


def _name(value: object) -> str:
    return check_name("profile", value)


def _metadata(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest("The 'metadata' of a profile must be a map.")
    return dict(value)


class SenlinProfiles:
    def __init__(self, db: Database, inventory: Callable[[], Inventory], clock: Clock) -> None:
        self.db = db
        self.inventory = inventory
        self.clock = clock

    def row(self, conn: Conn, who: Principal, ref: str) -> SenlinProfile:
        """By id, else by (Senlin) name, else by short id; two matches are Senlin's 400."""
        by_id = repo.get_profile(conn, who.project_id, ref)
        if by_id is not None and by_id["id"] == ref:
            return profile_of(by_id)
        rows = [profile_of(r) for r in repo.list_profiles(conn, who.project_id)]
        named = [r for r in rows if r.name == ref]
        if not named:
            named = [r for r in rows if r.id.startswith(ref)]
        return one(named, ref, "profile")

    def page(self, query: list_repo.ListQuery) -> list[dict[str, Any]]:
        """One page of Senlin's profile list, filtered, sorted and paged in SQL."""
        with self.db.reading() as conn:
            try:
                rows = list_repo.list_profiles(conn, query, NAMING)
            except list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{query.marker}' could not be found.") from None
        return [self.view(profile_of(r)) for r in rows]

    def get(self, who: Principal, ref: str) -> dict[str, Any]:
        with self.db.reading() as conn:
            r = self.row(conn, who, ref)
        return self.view(r)

    def _checked(self, spec: object) -> SenlinSpec:
        """Senlin checked a heat stack's template at profile create (Heat previewed the
        stack); Shoal reads it with the HOT reader, against the provider's catalog."""
        checked = parse_spec(spec)
        if checked.type_name == HEAT_STACK:
            read_stack(dict(checked.spec["properties"]), self.inventory())
        return checked

    def stack(self, row: SenlinProfile) -> StackReading | None:
        """What an `os.heat.stack` profile's template makes (None for other types)."""
        if row.stored_type != HEAT_STACK or not row.envelope:
            return None
        return read_stack(row.properties, self.inventory())

    def native(self, row: SenlinProfile) -> dict[str, Any]:
        """The native profile a node group of this stored profile is made from."""
        stack = self.stack(row)
        return stack.native() if stack is not None else native_of(row)

    def validate(self, who: Principal, body: dict[str, Any]) -> dict[str, Any]:
        checked = self._checked(body.get("spec"))
        return profile_view(
            None, "validated_profile", checked.type_name, checked.spec, {}, who.project_id
        )

    def create(self, who: Principal, body: dict[str, Any]) -> dict[str, Any]:
        name = _name(body.get("name"))
        metadata = _metadata(body.get("metadata"))
        try:
            checked = self._checked(body.get("spec"))
        except InvalidSpec as bad:
            raise BadRequest(
                f"Failed in creating profile {name}: {bad.message}", bad.details
            ) from None
        env = {"name": name, "spec": checked.spec, "metadata": metadata, "updated_at": None}
        with self.db.transaction() as conn:
            stored_name = _stored_name(conn, who.project_id, name)
            row = repo.create_profile(
                conn,
                who.project_id,
                stored_name,
                checked.type_name,
                {ENVELOPE: env},
                self.clock.now(),
            )
        return self.view(profile_of(row))

    @staticmethod
    def view(p: SenlinProfile) -> dict[str, Any]:
        return profile_view(
            p.id, p.name, p.type_name, p.spec, p.metadata, p.project_id, p.created_at, p.updated_at
        )

    def update(self, who: Principal, ref: str, body: dict[str, Any]) -> dict[str, Any]:
        if not body:
            raise BadRequest("No property needs an update.")
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            values: dict[str, Any] = {}
            name = row.name
            if "name" in body and body["name"] != name:
                name = _name(body["name"])
                values["name"] = _stored_name(conn, who.project_id, name)
            if row.envelope:
                spec, metadata = row.spec, row.metadata
                if "metadata" in body:
                    metadata = _metadata(body["metadata"])
                env = {
                    "name": name,
                    "spec": spec,
                    "metadata": metadata,
                    "updated_at": self.clock.now(),
                }
                values["spec"] = {ENVELOPE: env}
            elif body.get("metadata"):
                raise BadRequest(
                    f"Profile '{row.stored_name}' was created through Shoal's native API and keeps "
                    "no metadata; only its name can be changed here."
                )
            if not values:
                return self.view(row)
            repo.update_profile(conn, row.id, values)
            fresh = self.row(conn, who, row.id)
        return self.view(fresh)

    def delete(self, who: Principal, ref: str) -> None:
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            users = [
                c.name
                for c in cluster_repo.list_clusters(conn, who.project_id)
                if meta.decode(c.document.get("metadata", {})).profile_id == row.id
            ]
            if users:
                raise ResourceInUse(
                    f"The profile '{ref}' cannot be deleted: still referenced by some clusters "
                    "and/or nodes."
                )
            repo.delete_profile(conn, who.project_id, row.id)

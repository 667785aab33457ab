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
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shoal.clock import Clock
from shoal.model.inventory import Inventory
from shoal.service.senlin import meta
from shoal.service.senlin.bodies import check_name
from shoal.service.senlin.errors import BadRequest, InvalidSpec, ResourceInUse
from shoal.service.senlin.policy_store import one
from shoal.service.senlin.shapes import JsonObject, ProfileView
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


StoredRow = Mapping[str, object]
"""A row of `store/profiles.py`, which answers profiles as plain rows; read once here."""


def _object(value: object) -> JsonObject:
    """A JSON object read out of a stored row ({} for anything else)."""
    return dict(value) if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class SenlinProfile:
    """A stored profile as the façade reads it, built once from the store's row: what Senlin
    shows (name, type, spec, metadata) beside what Shoal stored (`stored_name`, `stored_type`,
    `stored_spec`, from which `native_of` builds a node group's profile)."""

    id: str
    name: str
    type_name: str
    spec: JsonObject
    metadata: JsonObject
    updated_at: float | None
    stored_name: str
    stored_type: str
    stored_spec: JsonObject
    project_id: str | None
    created_at: float | None

    @property
    def envelope(self) -> bool:
        """Made through the façade (its spec kept as Senlin was given it)."""
        return self.stored_type in PROFILE_TYPES and ENVELOPE in self.stored_spec

    @property
    def properties(self) -> JsonObject:
        """A façade-made profile's spec properties ({} for a native profile)."""
        return _object(self.spec.get("properties")) if self.envelope else {}


def _time(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def profile_of(row: StoredRow) -> SenlinProfile:
    """The façade's reading of a store row (`store/profiles.py`): a profile made through the
    façade keeps Senlin's name, spec, metadata and `updated_at` in its envelope; a native one
    is shown by its native kind (`spec_of_native`)."""
    stored_type, stored_spec = str(row["type"]), _object(row.get("spec"))
    env = stored_spec.get(ENVELOPE)
    if stored_type in PROFILE_TYPES and isinstance(env, dict):
        name = str(env.get("name") or row["name"])
        type_name, spec = stored_type, _object(env.get("spec"))
        metadata, updated_at = _object(env.get("metadata")), _time(env.get("updated_at"))
    else:
        name = str(row["name"])
        type_name, spec = spec_of_native(stored_spec)
        metadata, updated_at = {}, None
    project = row.get("project_id")
    return SenlinProfile(
        id=str(row["id"]),
        name=name,
        type_name=type_name,
        spec=spec,
        metadata=metadata,
        updated_at=updated_at,
        stored_name=str(row["name"]),
        stored_type=stored_type,
        stored_spec=stored_spec,
        project_id=project if isinstance(project, str) else None,
        created_at=_time(row.get("created_at")),
    )


def senlin_name(row: StoredRow) -> str:
    """The name Senlin clients know a profile by (stored under another when it repeats)."""
    return profile_of(row).name


def _stored_name(conn: Conn, project_id: str, name: str) -> str:
    """`name`, or a unique variant of it: Senlin lets profile names repeat, Shoal does not."""
    if repo.get_profile(conn, project_id, name) is None:
        return name
    return f"{name[:200]}~{uuid.uuid4().hex[:8]}"


def native_of(p: SenlinProfile) -> JsonObject:
    """The native profile a stored profile (either kind, not a heat stack) stands for."""
    if p.envelope:
        return to_native(p.stored_type, p.properties)
    return copy.deepcopy(p.stored_spec)


def _name(value: object) -> str:
    return check_name("profile", value)


def _metadata(value: object) -> JsonObject:
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

    def page(self, query: list_repo.ListQuery) -> list[ProfileView]:
        """One page of Senlin's profile list, filtered, sorted and paged in SQL."""
        with self.db.reading() as conn:
            try:
                rows = list_repo.list_profiles(conn, query, NAMING)
            except list_repo.MarkerNotFound:
                raise BadRequest(f"The marker '{query.marker}' could not be found.") from None
        return [self.view(profile_of(r)) for r in rows]

    def get(self, who: Principal, ref: str) -> ProfileView:
        with self.db.reading() as conn:
            r = self.row(conn, who, ref)
        return self.view(r)

    def _checked(self, spec: object) -> SenlinSpec:
        """Senlin checked a heat stack's template at profile create (Heat previewed the
        stack); Shoal reads it with the HOT reader, against the provider's catalog."""
        checked = parse_spec(spec)
        if checked.type_name == HEAT_STACK:
            read_stack(_object(checked.spec["properties"]), self.inventory())
        return checked

    def stack(self, row: SenlinProfile) -> StackReading | None:
        """What an `os.heat.stack` profile's template makes (None for other types)."""
        if row.stored_type != HEAT_STACK or not row.envelope:
            return None
        return read_stack(row.properties, self.inventory())

    def native(self, row: SenlinProfile) -> JsonObject:
        """The native profile a node group of this stored profile is made from."""
        stack = self.stack(row)
        return stack.native() if stack is not None else native_of(row)

    def validate(self, who: Principal, body: JsonObject) -> ProfileView:
        checked = self._checked(body.get("spec"))
        return profile_view(
            None, "validated_profile", checked.type_name, checked.spec, {}, who.project_id
        )

    def create(self, who: Principal, body: JsonObject) -> ProfileView:
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
    def view(p: SenlinProfile) -> ProfileView:
        return profile_view(
            p.id, p.name, p.type_name, p.spec, p.metadata, p.project_id, p.created_at, p.updated_at
        )

    def update(self, who: Principal, ref: str, body: JsonObject) -> ProfileView:
        if not body:
            raise BadRequest("No property needs an update.")
        with self.db.transaction() as conn:
            row = self.row(conn, who, ref)
            values: JsonObject = {}
            name = row.name
            if "name" in body and body["name"] != name:
                name = _name(body["name"])
                values["name"] = _stored_name(conn, who.project_id, name)
            if row.envelope:
                spec, metadata = row.spec, row.metadata
                if "metadata" in body:
                    metadata = _metadata(body["metadata"])
                env: JsonObject = {
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

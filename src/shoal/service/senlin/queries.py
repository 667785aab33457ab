"""Senlin's list query strings, checked before any lookup: which parameters each collection
takes, its sort keys, the value sets of its filters, and `limit`, `marker` and `global_project`.

Senlin (through oslo.versionedobjects) refused anything else with a 400 in its own words, and
clients and the conformance suite rely on those words, so they are copied here. The result is a
typed `ListQuery` the reads take, never the raw query string.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shoal.service.errors import Forbidden
from shoal.service.senlin.errors import BadRequest
from shoal.store.records import Principal

CLUSTER_STATUSES = (
    "INIT",
    "ACTIVE",
    "CREATING",
    "UPDATING",
    "RESIZING",
    "DELETING",
    "CHECKING",
    "RECOVERING",
    "CRITICAL",
    "ERROR",
    "WARNING",
    "OPERATING",
)
NODE_STATUSES = (
    "INIT",
    "ACTIVE",
    "ERROR",
    "WARNING",
    "CREATING",
    "UPDATING",
    "DELETING",
    "RECOVERING",
    "OPERATING",
)
ACTION_STATUSES = (
    "INIT",
    "WAITING",
    "READY",
    "RUNNING",
    "SUCCEEDED",
    "FAILED",
    "CANCELLED",
    "WAITING_LIFECYCLE_COMPLETION",
    "SUSPENDED",
)
EVENT_LEVELS = ("CRITICAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG")
ACTION_NAMES = (
    "CLUSTER_CREATE",
    "CLUSTER_DELETE",
    "CLUSTER_UPDATE",
    "CLUSTER_ADD_NODES",
    "CLUSTER_DEL_NODES",
    "CLUSTER_REPLACE_NODES",
    "CLUSTER_RESIZE",
    "CLUSTER_SCALE_IN",
    "CLUSTER_SCALE_OUT",
    "CLUSTER_CHECK",
    "CLUSTER_RECOVER",
    "CLUSTER_ATTACH_POLICY",
    "CLUSTER_DETACH_POLICY",
    "CLUSTER_UPDATE_POLICY",
    "CLUSTER_OPERATION",
    "NODE_CREATE",
    "NODE_DELETE",
    "NODE_UPDATE",
    "NODE_JOIN",
    "NODE_LEAVE",
    "NODE_CHECK",
    "NODE_RECOVER",
    "NODE_OPERATION",
)
_PAGING = ("limit", "marker", "sort", "global_project")


@dataclass(frozen=True, slots=True)
class Collection:
    """What one Senlin collection accepts in its query string."""

    name: str
    filters: tuple[str, ...]
    sort_keys: tuple[str, ...]
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    paged: bool = True
    quoted_unknown: bool = False
    """Senlin's cluster list said "Invalid parameter 'x'"; the others "Invalid parameter x"."""


CLUSTERS = Collection(
    "clusters",
    ("name", "status"),
    ("name", "status", "init_at", "created_at", "updated_at"),
    {"status": CLUSTER_STATUSES},
    quoted_unknown=True,
)
NODES = Collection(
    "nodes",
    ("cluster_id", "name", "status", "show_details"),
    ("name", "index", "status", "init_at", "created_at", "updated_at"),
    {"status": NODE_STATUSES},
)
PROFILES = Collection("profiles", ("name", "type"), ("type", "name", "created_at", "updated_at"))
POLICIES = Collection("policies", ("name", "type"), ("type", "name", "created_at", "updated_at"))
RECEIVERS = Collection(
    "receivers",
    ("name", "type", "cluster_id", "action", "user"),
    ("name", "type", "action", "cluster_id", "created_at"),
    {"type": ("webhook", "message"), "action": ACTION_NAMES},
)
ACTIONS = Collection(
    "actions",
    ("name", "cluster_id", "action", "target", "status"),
    ("name", "target", "action", "created_at", "status"),
    {"status": ACTION_STATUSES, "action": ACTION_NAMES},
)
EVENTS = Collection(
    "events",
    ("oid", "oname", "otype", "action", "cluster_id", "level"),
    ("timestamp", "level", "otype", "oname", "action", "status", "oid", "cluster_id"),
    {
        "level": EVENT_LEVELS,
        "action": ACTION_NAMES,
        "otype": ("CLUSTER", "NODE", "PROFILE", "POLICY", "ACTION"),
    },
)
CLUSTER_POLICIES = Collection(
    "cluster_policies",
    ("enabled", "policy_name", "policy_type"),
    ("enabled",),
    paged=False,
)

MAX_LIMIT = 1000
"""No page is longer, whatever `limit` says (Senlin's own cap was configurable)."""


@dataclass(frozen=True, slots=True)
class SortKey:
    key: str
    descending: bool = False


@dataclass(frozen=True, slots=True)
class ListQuery:
    """A checked list request: filters (each a set of accepted values), sort, page, scope."""

    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sort: tuple[SortKey, ...] = ()
    limit: int | None = None
    marker: str | None = None
    global_project: bool = False
    show_details: bool = False

    def one(self, name: str) -> str | None:
        values = self.filters.get(name)
        return values[0] if values else None


def _bool(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on", "t", "y"):
        return True
    if lowered in ("false", "0", "no", "off", "f", "n"):
        return False
    raise BadRequest(f"Invalid value '{value}' specified for '{name}'")


def parse_limit(value: str) -> int:
    try:
        limit = int(value.strip())
    except ValueError:
        raise BadRequest(f"The value for limit must be an integer: '{value}'.") from None
    if limit < 0:
        raise BadRequest("Value must be >= 0 for field 'limit'.")
    return min(limit, MAX_LIMIT)


def parse_sort(value: str, keys: Sequence[str]) -> tuple[SortKey, ...]:
    out: list[SortKey] = []
    for part in value.split(","):
        key, _, direction = part.strip().partition(":")
        if key not in keys:
            raise BadRequest(f"Unsupported sort key '{key}' for 'sort'.")
        if direction not in ("", "asc", "desc"):
            raise BadRequest(f"Unsupported sort dir '{direction}' for 'sort'.")
        out.append(SortKey(key, direction == "desc"))
    return tuple(out)


def parse_query(
    what: Collection, params: Sequence[tuple[str, str]], who: Principal | None = None
) -> ListQuery:
    """Check a query string (its pairs, a name may repeat) against `what`; 400 naming the first
    problem, 403 for `global_project` asked by a non-admin."""
    allowed = set(what.filters) | (set(_PAGING) if what.paged else {"sort"})
    for name, _ in params:
        if name not in allowed:
            shown = f"'{name}'" if what.quoted_unknown else name
            raise BadRequest(f"Invalid parameter {shown}")
    filters: dict[str, list[str]] = {}
    limit = marker = None
    sort: tuple[SortKey, ...] = ()
    global_project = show_details = False
    for name, value in params:
        if name == "limit":
            limit = parse_limit(value)
        elif name == "marker":
            try:
                uuid.UUID(value)
            except ValueError:
                raise BadRequest(f"The value for marker is not a valid UUID: '{value}'.") from None
            marker = value
        elif name == "sort":
            sort = parse_sort(value, what.sort_keys)
        elif name == "global_project":
            global_project = _bool(name, value)
        elif name == "show_details":
            show_details = _bool(name, value)
        elif name == "enabled":
            filters.setdefault(name, []).append(str(_bool(name, value)).lower())
        else:
            accepted = what.values.get(name)
            if accepted is not None:
                canonical = [a for a in accepted if a.upper() == value.upper()]
                if not canonical:
                    raise BadRequest(f"Field value {value} is invalid")
                value = canonical[0]
            filters.setdefault(name, []).append(value)
    if global_project and who is not None and not who.is_admin:
        raise Forbidden("You are not authorized to complete this operation.")
    return ListQuery(
        filters={k: tuple(v) for k, v in filters.items()},
        sort=sort,
        limit=limit,
        marker=marker,
        global_project=global_project,
        show_details=show_details,
    )

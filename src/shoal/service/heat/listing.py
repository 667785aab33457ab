"""A stack list's query as Heat reads it: filters, tags, sort keys and direction, marker and
limit, applied to the stacks' summaries (a list reads at most `MAX_STACKS_LISTED` rows)."""

from __future__ import annotations

from typing import Any

from shoal.service.errors import NotFound
from shoal.service.heat import bodies
from shoal.service.heat.errors import HeatBadRequest

MAX_LIMIT = 1000
_SORT_KEYS = {
    "stack_name": "stack_name",
    "stack_status": "stack_status",
    "creation_time": "creation_time",
    "created_at": "creation_time",
    "updated_time": "updated_time",
    "updated_at": "updated_time",
    "name": "stack_name",
    "status": "stack_status",
}


_LIST_PARAMS = {
    "id",
    "status",
    "name",
    "action",
    "tenant",
    "username",
    "owner_id",
    "sort_keys",
    "sort_dir",
    "limit",
    "marker",
    "show_deleted",
    "show_nested",
    "show_hidden",
    "tags",
    "tags_any",
    "not_tags",
    "not_tags_any",
    "global_tenant",
    "with_count",
    "project_id",
}


def list_query(query: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in query:
        if k not in _LIST_PARAMS:
            continue  # Heat ignores what it does not know
        out.setdefault(k, []).append(v)
    return out


def filtered(items: list[dict[str, Any]], params: dict[str, list[str]]) -> list[dict[str, Any]]:
    def keep(s: dict[str, Any]) -> bool:
        action, _, status = str(s["stack_status"]).partition("_")
        checks = [
            ("id", s["id"]),
            ("name", s["stack_name"]),
            ("status", status),
            ("action", action),
        ]
        for key, value in checks:
            if key in params and value not in params[key]:
                return False
        tags = set(s.get("tags") or [])
        for key, want_all, negate in (
            ("tags", True, False),
            ("tags_any", False, False),
            ("not_tags", True, True),
            ("not_tags_any", False, True),
        ):
            if key not in params:
                continue
            wanted = set(bodies.tags_of(params[key][0]))
            hit = wanted <= tags if want_all else bool(wanted & tags)
            if hit == negate:
                return False
        return True

    return [s for s in items if keep(s)]


def sorted_by(items: list[dict[str, Any]], params: dict[str, list[str]]) -> list[dict[str, Any]]:
    keys = [k for v in params.get("sort_keys", []) for k in v.split(",") if k]
    for k in keys:
        if k not in _SORT_KEYS:
            raise HeatBadRequest(f'Sort key "{k}" not supported')
    direction = params.get("sort_dir", ["desc"])[0]
    if direction not in ("asc", "desc"):
        raise HeatBadRequest(f"Unknown sort direction, must be 'desc' or 'asc': {direction}")
    fields = [_SORT_KEYS[k] for k in keys] or ["creation_time"]
    return sorted(
        items,
        key=lambda s: (*tuple(str(s.get(f) or "") for f in fields), s["id"]),
        reverse=direction == "desc",
    )


def paged(items: list[dict[str, Any]], params: dict[str, list[str]]) -> list[dict[str, Any]]:
    if "marker" in params:
        marker = params["marker"][0]
        at = next((i for i, s in enumerate(items) if s["id"] == marker), None)
        if at is None:
            raise NotFound(f"The Stack ({marker}) could not be found.")
        items = items[at + 1 :]
    limit = MAX_LIMIT
    if "limit" in params:
        try:
            limit = int(params["limit"][0])
        except ValueError:
            raise HeatBadRequest("Only integer is acceptable by 'limit'.") from None
        if limit < 0:
            raise HeatBadRequest("Value must be >= 0 for field 'limit'.")
    return items[: min(limit, MAX_LIMIT)]

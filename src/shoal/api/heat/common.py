"""Shared pieces of the orchestration façade's routes: the Heat services for a request, the
project in the path checked against the caller's, JSON bodies, the base URL of links, and
Heat's name lookup (a 302 from `/stacks/{name}...` to `/stacks/{name}/{id}...`)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from shoal.api.auth import runtime_of
from shoal.api.characters import unstorable_body
from shoal.service.errors import Forbidden
from shoal.service.heat.errors import HeatBadRequest
from shoal.service.heat.previews import HeatPreviews
from shoal.service.heat.reading import Readings
from shoal.service.heat.resources import HeatResources
from shoal.service.heat.software import HeatSoftware
from shoal.service.heat.stacks import HeatStacks
from shoal.service.senlin.bodies import check_depth
from shoal.store.records import Principal

MAX_DEPTH = 64
"""JSON nesting a request body may have (templates nest deeper than Senlin's bodies)."""
SUBPATHS = frozenset(
    {
        "resources",
        "events",
        "template",
        "environment",
        "files",
        "outputs",
        "preview",
        "actions",
        "abandon",
        "snapshots",
        "export",
    }
)
"""What may follow a stack's name without its id (Heat's router redirects them)."""


def stacks_of(request: Request) -> HeatStacks:
    rt = runtime_of(request)
    readings: Readings = request.app.state.readings
    return HeatStacks(rt.db, rt.service, rt.queries, rt.service.inventory, rt.clock, readings)


def previews_of(request: Request) -> HeatPreviews:
    return HeatPreviews(stacks_of(request))


def resources_of(request: Request) -> HeatResources:
    return HeatResources(stacks_of(request))


def software_of(request: Request) -> HeatSoftware:
    rt = runtime_of(request)
    return HeatSoftware(rt.db, rt.clock)


def check_project(who: Principal, project: str) -> None:
    """The project in the URL is the caller's (an admin may name any)."""
    if project != who.project_id and not who.is_admin:
        raise Forbidden(f"the URL names project {project}, the token is scoped to another")


def base_url(request: Request, project: str) -> str:
    root = str(request.base_url).rstrip("/")
    return f"{root}{request.scope.get('root_path', '')}/v1/{project}"


async def body_of(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return {}
    check_depth(raw, MAX_DEPTH)
    if unstorable_body(raw):
        raise HeatBadRequest("The request body holds a character that cannot be stored (NUL)")
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise HeatBadRequest("The request body is not valid JSON.") from None


def query_of(request: Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in request.query_params.multi_items():
        out.setdefault(k, []).append(v)
    return out

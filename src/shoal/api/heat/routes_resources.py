"""A stack's resources (list, show, metadata, mark unhealthy, signal) and events (the
stack's, a resource's, one event); then the name lookup for every other path under a stack."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller
from shoal.api.heat.common import (
    SUBPATHS,
    base_url,
    body_of,
    check_project,
    query_of,
    resources_of,
)
from shoal.api.heat.routes_stacks import redirect
from shoal.service.heat.errors import EntityNotFound

router = APIRouter(prefix="/v1/{project}/stacks/{name}/{sid}")
lookup = APIRouter(prefix="/v1/{project}/stacks/{name}/{sub}")


@router.get("/resources")
async def list_resources(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(
        resources_of(request).listing, who, name, sid, query_of(request), base_url(request, project)
    )
    return {"resources": found}


@router.get("/resources/{resource}")
async def show_resource(
    request: Request, project: str, name: str, sid: str, resource: str, who: Caller
) -> Any:
    check_project(who, project)
    shown = await run_in_threadpool(
        resources_of(request).show, who, name, sid, resource, base_url(request, project)
    )
    return {"resource": shown}


@router.get("/resources/{resource}/metadata")
async def resource_metadata(
    request: Request, project: str, name: str, sid: str, resource: str, who: Caller
) -> Any:
    check_project(who, project)
    meta = await run_in_threadpool(resources_of(request).metadata, who, name, sid, resource)
    return {"metadata": meta}


@router.patch("/resources/{resource}")
async def mark_resource(
    request: Request, project: str, name: str, sid: str, resource: str, who: Caller
) -> Any:
    check_project(who, project)
    data = await body_of(request)
    await run_in_threadpool(resources_of(request).mark, who, name, sid, resource, data)
    return {}


@router.post("/resources/{resource}/signal")
async def signal_resource(
    request: Request, project: str, name: str, sid: str, resource: str, who: Caller
) -> Any:
    check_project(who, project)
    await body_of(request)
    await run_in_threadpool(resources_of(request).signal, who, name, sid, resource)
    return Response(status_code=200)


@router.get("/events")
async def stack_events(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(
        resources_of(request).events,
        who,
        name,
        sid,
        query_of(request),
        base_url(request, project),
    )
    return {"events": found}


@router.get("/resources/{resource}/events")
async def resource_events(
    request: Request, project: str, name: str, sid: str, resource: str, who: Caller
) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(
        resources_of(request).events,
        who,
        name,
        sid,
        query_of(request),
        base_url(request, project),
        resource,
    )
    return {"events": found}


@router.get("/resources/{resource}/events/{event}")
async def show_event(
    request: Request, project: str, name: str, sid: str, resource: str, event: str, who: Caller
) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(
        resources_of(request).events, who, name, sid, {}, base_url(request, project), resource
    )
    for e in found:
        if e["id"] == event:
            return {"event": e}
    raise EntityNotFound(f"The Event ({event}) could not be found.")


@lookup.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"])
async def named_subpath(
    request: Request, project: str, name: str, sub: str, rest: str, who: Caller
) -> Any:
    """`/stacks/{name}/resources/...` and the like: 302 to the stack's id path."""
    check_project(who, project)
    if sub in SUBPATHS:
        raise await run_in_threadpool(redirect, request, who, name)
    raise EntityNotFound(f"The resource could not be found: {request.url.path}")

"""Shared pieces of the façade's routes: the Senlin services for a request, JSON bodies, 202
answers with a Location, paging parameters."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from shoal.api.auth import runtime_of
from shoal.api.senlin.versions import version_of
from shoal.service.senlin.attach import SenlinAttach
from shoal.service.senlin.bodies import check_depth
from shoal.service.senlin.clusters import SenlinClusters
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.policy_store import SenlinPolicies
from shoal.service.senlin.profiles import SenlinProfiles
from shoal.service.senlin.queries import Collection, parse_query
from shoal.service.senlin.reads import Filters, Paging, SenlinReads
from shoal.service.senlin.requests import as_bool
from shoal.service.senlin.standalone import SenlinNodes
from shoal.store.records import Principal


def profiles_of(request: Request) -> SenlinProfiles:
    rt = runtime_of(request)
    return SenlinProfiles(rt.db, rt.service.inventory, rt.clock)


def policies_of(request: Request) -> SenlinPolicies:
    rt = runtime_of(request)
    return SenlinPolicies(rt.db, rt.clock)


def attach_of(request: Request) -> SenlinAttach:
    return SenlinAttach(runtime_of(request).service, policies_of(request))


def clusters_of(request: Request) -> SenlinClusters:
    return SenlinClusters(runtime_of(request).service, profiles_of(request), policies_of(request))


def nodes_of(request: Request) -> SenlinNodes:
    rt = runtime_of(request)
    return SenlinNodes(rt.db, profiles_of(request), rt.service.inventory, rt.clock)


def needs(request: Request, version: tuple[int, int]) -> None:
    """Senlin's 400 for a method newer than the request's microversion."""
    asked = version_of(request)
    if asked < version:
        raise BadRequest(f"API version '{asked[0]}.{asked[1]}' is not supported on this method.")


def reads_of(request: Request) -> SenlinReads:
    return SenlinReads(runtime_of(request).db)


async def body_of(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return {}
    check_depth(raw)
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BadRequest("The request body is not valid JSON.") from None


def location(request: Request, action_id: str) -> str:
    return f"{request.scope.get('root_path', '')}/v1/actions/{action_id}"


def accepted(request: Request, body: dict[str, Any], action_id: str) -> JSONResponse:
    return JSONResponse(body, status_code=202, headers={"Location": location(request, action_id)})


def accepted_empty(request: Request, action_id: str) -> Response:
    """Senlin's answer to a DELETE: 202, the action in Location, no body."""
    return Response(status_code=202, headers={"Location": location(request, action_id)})


def listing(request: Request, what: Collection, who: Principal) -> tuple[Filters, Paging]:
    """The checked query string of a list request: its filters and its page."""
    q = parse_query(what, request.query_params.multi_items(), who)
    sort = ",".join(f"{k.key}:{'desc' if k.descending else 'asc'}" for k in q.sort) or None
    paging = Paging(limit=q.limit, marker=q.marker, sort=sort, everyone=q.global_project)
    return dict(q.filters), paging


def flag(request: Request, name: str) -> bool:
    value = request.query_params.get(name)
    return False if value is None else as_bool(name, value)

"""Project quotas: `GET /v1/projects/{id}/quotas` (the project itself or an admin) and
`PUT /v1/projects/{id}/quotas` (admin), with limits and what is in use per resource."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.routes_clusters import json_object
from shoal.service.quotas import QuotaService

router = APIRouter(
    prefix="/v1",
    tags=["profiles, projects"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)


def _quotas(request: Request) -> QuotaService:
    rt = runtime_of(request)
    return QuotaService(rt.db, rt.clock, rt.service.limits)


@router.get("/projects/{project}/quotas", response_model=schemas.QuotaView)
async def show_quotas(project: str, request: Request, who: Caller) -> schemas.QuotaView:
    return await run_in_threadpool(_quotas(request).show, who, project)


@router.put("/projects/{project}/quotas", response_model=schemas.QuotaView)
async def set_quotas(project: str, request: Request, who: Caller) -> schemas.QuotaView:
    body = await json_object(request)
    return await run_in_threadpool(_quotas(request).set, who, project, body)

"""Heat's software configs and deployments, and a server's deployment metadata."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller
from shoal.api.heat.common import body_of, check_project, software_of
from shoal.service.heat.errors import HeatBadRequest
from shoal.service.heat.software import config_view, deployment_view

router = APIRouter(prefix="/v1/{project}")


@router.post("/software_configs")
async def create_config(request: Request, project: str, who: Caller) -> Any:
    check_project(who, project)
    data = await body_of(request)
    row = await run_in_threadpool(software_of(request).create_config, who, data)
    return {"software_config": config_view(row)}


@router.get("/software_configs")
async def list_configs(request: Request, project: str, who: Caller) -> Any:
    check_project(who, project)
    raw = request.query_params.get("limit")
    try:
        limit = None if raw is None else int(raw)
    except ValueError:
        raise HeatBadRequest("Only integer is acceptable by 'limit'.") from None
    rows = await run_in_threadpool(software_of(request).configs, who, limit)
    return {"software_configs": [config_view(c, full=False) for c in rows]}


@router.get("/software_configs/{config_id}")
async def show_config(request: Request, project: str, config_id: str, who: Caller) -> Any:
    check_project(who, project)
    row = await run_in_threadpool(software_of(request).config, who, config_id)
    return {"software_config": config_view(row)}


@router.delete(
    "/software_configs/{config_id}", status_code=204, response_class=Response, response_model=None
)
async def delete_config(request: Request, project: str, config_id: str, who: Caller) -> Response:
    check_project(who, project)
    await run_in_threadpool(software_of(request).delete_config, who, config_id)
    return Response(status_code=204)


@router.post("/software_deployments")
async def create_deployment(request: Request, project: str, who: Caller) -> Any:
    check_project(who, project)
    data = await body_of(request)
    row = await run_in_threadpool(software_of(request).create_deployment, who, data)
    return {"software_deployment": deployment_view(row)}


@router.get("/software_deployments")
async def list_deployments(request: Request, project: str, who: Caller) -> Any:
    check_project(who, project)
    server = request.query_params.get("server_id")
    rows = await run_in_threadpool(software_of(request).deployments, who, server)
    return {"software_deployments": [deployment_view(d) for d in rows]}


@router.get("/software_deployments/metadata/{server_id}")
async def server_metadata(request: Request, project: str, server_id: str, who: Caller) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(software_of(request).metadata, who, server_id)
    return {"metadata": found}


@router.get("/software_deployments/{deployment_id}")
async def show_deployment(request: Request, project: str, deployment_id: str, who: Caller) -> Any:
    check_project(who, project)
    row = await run_in_threadpool(software_of(request).deployment, who, deployment_id)
    return {"software_deployment": deployment_view(row)}


@router.put("/software_deployments/{deployment_id}")
async def update_deployment(request: Request, project: str, deployment_id: str, who: Caller) -> Any:
    check_project(who, project)
    data = await body_of(request)
    row = await run_in_threadpool(software_of(request).update_deployment, who, deployment_id, data)
    return {"software_deployment": deployment_view(row)}


@router.delete(
    "/software_deployments/{deployment_id}",
    status_code=204,
    response_class=Response,
    response_model=None,
)
async def delete_deployment(
    request: Request, project: str, deployment_id: str, who: Caller
) -> Response:
    check_project(who, project)
    await run_in_threadpool(software_of(request).delete_deployment, who, deployment_id)
    return Response(status_code=204)

"""What the API says of itself: template versions and functions, resource types (list, show,
template), validate, build info."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from shoal import __version__
from shoal.api.auth import Caller
from shoal.api.heat.common import body_of, check_project, previews_of
from shoal.service.heat import catalog
from shoal.service.heat.errors import HeatBadRequest

router = APIRouter(prefix="/v1/{project}")
MAX_PATTERN = 255


@router.get("/template_versions")
async def template_versions(project: str, who: Caller) -> Any:
    check_project(who, project)
    return {"template_versions": catalog.template_versions()}


@router.get("/template_versions/{version}/functions")
async def template_functions(request: Request, project: str, version: str, who: Caller) -> Any:
    check_project(who, project)
    conditions = request.query_params.get("with_condition_func", "false").lower() == "true"
    return {"template_functions": catalog.template_functions(version, conditions)}


@router.get("/resource_types")
async def resource_types(request: Request, project: str, who: Caller) -> Any:
    check_project(who, project)
    names = catalog.served_types()
    wanted = request.query_params.get("name")
    if wanted:
        if len(wanted) > MAX_PATTERN:
            raise HeatBadRequest(f"'name' is at most {MAX_PATTERN} characters")
        try:
            pattern = re.compile(wanted)  # Heat matches the name as a pattern
        except re.error:
            raise HeatBadRequest(f"'name' is not a valid pattern: {wanted}") from None
        names = [n for n in names if pattern.search(n)]
    if request.query_params.get("with_description", "false").lower() == "true":
        return {
            "resource_types": [
                {"resource_type": n, "description": catalog.resource_type(n)["description"]}
                for n in names
            ]
        }
    return {"resource_types": names}


@router.get("/resource_types/{type_name}")
async def show_resource_type(project: str, type_name: str, who: Caller) -> Any:
    check_project(who, project)
    return catalog.resource_type(type_name)


@router.get("/resource_types/{type_name}/template")
async def resource_type_template(
    request: Request, project: str, type_name: str, who: Caller
) -> Any:
    check_project(who, project)
    kind = request.query_params.get("template_type", "cfn")
    return catalog.type_template(type_name, kind)


@router.post("/validate")
async def validate(request: Request, project: str, who: Caller) -> Any:
    check_project(who, project)
    data = await body_of(request)
    return await run_in_threadpool(previews_of(request).validate, data)


@router.get("/build_info")
async def build_info(project: str, who: Caller) -> Any:
    check_project(who, project)
    return catalog.build_info(__version__)

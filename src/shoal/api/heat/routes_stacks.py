"""Stacks: list, create (201 + Location), preview, show, update (PUT, PATCH), delete (204),
outputs, template, environment, files, and the 302 name lookup for every method."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from shoal.api.auth import Caller
from shoal.api.heat.common import (
    SUBPATHS,
    base_url,
    body_of,
    check_project,
    previews_of,
    stacks_of,
)
from shoal.api.heat.errors import Redirect
from shoal.service.heat.errors import EntityNotFound
from shoal.service.heat.reading import merged_environment
from shoal.store.records import Principal

router = APIRouter(prefix="/v1/{project}")
_ALL = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]


@router.get("/stacks")
async def list_stacks(request: Request, project: str, who: Caller) -> dict[str, Any]:
    check_project(who, project)
    query = list(request.query_params.multi_items())
    found = await run_in_threadpool(
        stacks_of(request).listing, who, query, base_url(request, project)
    )
    return {"stacks": found}


@router.post("/stacks", status_code=201)
async def create_stack(request: Request, project: str, who: Caller) -> JSONResponse:
    check_project(who, project)
    data = await body_of(request)
    row = await run_in_threadpool(stacks_of(request).create, who, data)
    href = f"{base_url(request, project)}/stacks/{row.name}/{row.cluster_id}"
    return JSONResponse(
        {"stack": {"id": row.cluster_id, "links": [{"href": href, "rel": "self"}]}},
        status_code=201,
        headers={"Location": href},
    )


@router.post("/stacks/preview")
async def preview_stack(request: Request, project: str, who: Caller) -> dict[str, Any]:
    check_project(who, project)
    data = await body_of(request)
    return await run_in_threadpool(previews_of(request).preview, who, data)


def redirect(request: Request, who: Principal, name: str) -> Redirect:
    """Where `/stacks/{name}...` lives: the same path with the stack's id after its name."""
    row = stacks_of(request).identify(who, name)
    path = request.url.path
    head, _, tail = path.partition(f"/stacks/{name}")
    url = request.url.replace(path=f"{head}/stacks/{row.name}/{row.cluster_id}{tail}")
    return Redirect(str(url))


@router.api_route("/stacks/{name}", methods=_ALL)
async def named(request: Request, project: str, name: str, who: Caller) -> Response:
    check_project(who, project)
    raise await run_in_threadpool(redirect, request, who, name)


async def _sub(request: Request, who: Principal, name: str, sid: str) -> None:
    """A path whose second part is a sub-path's name, not an id: Heat's lookup."""
    if sid in SUBPATHS:
        raise await run_in_threadpool(redirect, request, who, name)


@router.get("/stacks/{name}/{sid}")
async def show_stack(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    await _sub(request, who, name, sid)
    shown = await run_in_threadpool(
        stacks_of(request).show, who, name, sid, base_url(request, project)
    )
    return {"stack": shown}


async def _update(
    request: Request, project: str, name: str, sid: str, who: Principal, patch: bool
) -> Response:
    check_project(who, project)
    await _sub(request, who, name, sid)
    data = await body_of(request)
    await run_in_threadpool(stacks_of(request).update, who, name, sid, data, patch=patch)
    return Response(status_code=202)


@router.put("/stacks/{name}/{sid}", status_code=202)
async def update_stack(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    return await _update(request, project, name, sid, who, False)


@router.patch("/stacks/{name}/{sid}", status_code=202)
async def patch_stack(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    return await _update(request, project, name, sid, who, True)


@router.delete(
    "/stacks/{name}/{sid}", status_code=204, response_class=Response, response_model=None
)
async def delete_stack(
    request: Request, project: str, name: str, sid: str, who: Caller
) -> Response:
    check_project(who, project)
    await _sub(request, who, name, sid)
    await run_in_threadpool(stacks_of(request).delete, who, name, sid)
    return Response(status_code=204)


async def _preview_update(
    request: Request, project: str, name: str, sid: str, who: Principal, patch: bool
) -> dict[str, Any]:
    check_project(who, project)
    data = await body_of(request)
    return await run_in_threadpool(
        previews_of(request).preview_update, who, name, sid, data, patch=patch
    )


@router.put("/stacks/{name}/{sid}/preview")
async def preview_update(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    return await _preview_update(request, project, name, sid, who, False)


@router.patch("/stacks/{name}/{sid}/preview")
async def preview_patch(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    return await _preview_update(request, project, name, sid, who, True)


@router.get("/stacks/{name}/{sid}/outputs")
async def list_outputs(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    stacks = stacks_of(request)
    found = await run_in_threadpool(stacks.find, who, name, sid)
    outputs = await run_in_threadpool(stacks.outputs, who, found)
    return {
        "outputs": [
            {"output_key": o["output_key"], "description": o["description"]} for o in outputs
        ]
    }


@router.get("/stacks/{name}/{sid}/outputs/{key}")
async def show_output(
    request: Request, project: str, name: str, sid: str, key: str, who: Caller
) -> Any:
    check_project(who, project)
    stacks = stacks_of(request)
    found = await run_in_threadpool(stacks.find, who, name, sid)
    outputs = await run_in_threadpool(stacks.outputs, who, found)
    for o in outputs:
        if o["output_key"] == key:
            return {"output": o}
    raise EntityNotFound(f"Specified output key {key} not found.")


@router.get("/stacks/{name}/{sid}/template")
async def show_template(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(stacks_of(request).find, who, name, sid)
    return found.row.body.get("template", {})


@router.get("/stacks/{name}/{sid}/environment")
async def show_environment(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(stacks_of(request).find, who, name, sid)
    return merged_environment(found.row.body)


@router.get("/stacks/{name}/{sid}/files")
async def show_files(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    check_project(who, project)
    found = await run_in_threadpool(stacks_of(request).find, who, name, sid)
    return found.row.body.get("files") or {}


@router.api_route("/stacks/{name}/{sid}", methods=["POST", "HEAD"])
async def other_methods(request: Request, project: str, name: str, sid: str, who: Caller) -> Any:
    """A stack's sub-path by name answers 302 whatever the method; a stack itself has no POST."""
    check_project(who, project)
    await _sub(request, who, name, sid)
    raise StarletteHTTPException(405, "The method is not allowed for this resource.")

"""Profiles a project keeps, and projects with their tokens (admin)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller, runtime_of
from shoal.api.bodies import ProjectBody
from shoal.api.routes_clusters import json_object
from shoal.service.errors import Conflict, Forbidden
from shoal.store import auth as auth_repo
from shoal.store.errors import NameTaken

router = APIRouter(prefix="/v1", tags=["profiles, projects"])


@router.get("/profiles")
async def list_profiles(request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"profiles": await run_in_threadpool(rt.profiles.list, who)}


@router.post("/profiles", status_code=201)
async def create_profile(request: Request, who: Caller) -> JSONResponse:
    rt = runtime_of(request)
    body = await json_object(request)
    profile = await run_in_threadpool(rt.profiles.create, who, body)
    return JSONResponse({"profile": profile}, status_code=201)


@router.get("/profiles/{ref}")
async def get_profile(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"profile": await run_in_threadpool(rt.profiles.get, who, ref)}


@router.delete("/profiles/{ref}", status_code=204)
async def delete_profile(ref: str, request: Request, who: Caller) -> Response:
    rt = runtime_of(request)
    await run_in_threadpool(rt.profiles.delete, who, ref)
    return Response(status_code=204)


@router.post("/projects", status_code=201)
async def create_project(body: ProjectBody, request: Request, who: Caller) -> JSONResponse:
    if not who.is_admin:
        raise Forbidden("only an admin creates projects")
    rt = runtime_of(request)

    def create() -> tuple[str, str]:
        with rt.db.transaction() as conn:
            try:
                project_id = auth_repo.create_project(conn, body.name, rt.clock.now())
            except NameTaken as e:
                raise Conflict(str(e), [{"path": "/name", "message": str(e)}]) from None
            return project_id, auth_repo.issue_token(conn, project_id, rt.clock.now(), name="first")

    project_id, token = await run_in_threadpool(create)
    return JSONResponse(
        {"project": {"id": project_id, "name": body.name}, "token": token}, status_code=201
    )

"""Profiles a project keeps, and projects with their tokens (admin)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.bodies import ProjectBody
from shoal.api.routes_clusters import json_object
from shoal.api.routes_tokens import token_view, ttl_of
from shoal.service.errors import Conflict, Forbidden
from shoal.store import auth as auth_repo
from shoal.store.errors import NameTaken

router = APIRouter(
    prefix="/v1",
    tags=["profiles, projects"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)


@router.get("/profiles", response_model=schemas.ProfileList)
async def list_profiles(request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"profiles": await run_in_threadpool(rt.profiles.list, who)}


@router.post(
    "/profiles",
    status_code=201,
    response_model=schemas.OneProfile,
    openapi_extra=schemas.raw_body(
        "`name`, then the profile itself: `type` (server or volume), `flavor`, `image`, …"
    ),
)
async def create_profile(request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    body = await json_object(request)
    profile = await run_in_threadpool(rt.profiles.create, who, body)
    return {"profile": profile}


@router.get("/profiles/{ref}", response_model=schemas.OneProfile)
async def get_profile(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"profile": await run_in_threadpool(rt.profiles.get, who, ref)}


@router.delete("/profiles/{ref}", status_code=204)
async def delete_profile(ref: str, request: Request, who: Caller) -> Response:
    rt = runtime_of(request)
    await run_in_threadpool(rt.profiles.delete, who, ref)
    return Response(status_code=204)


@router.post("/projects", status_code=201, response_model=schemas.NewProject)
async def create_project(body: ProjectBody, request: Request, who: Caller) -> dict[str, Any]:
    """A new project and its first token (which expires as `expires_in_s` or the default)."""
    if not who.is_admin:
        raise Forbidden("only an admin creates projects")
    rt = runtime_of(request)
    now = rt.clock.now()

    def create() -> tuple[str, auth_repo.Issued]:
        with rt.db.transaction() as conn:
            try:
                project_id = auth_repo.create_project(conn, body.name, now)
            except NameTaken as e:
                raise Conflict(str(e), [{"path": "/name", "message": str(e)}]) from None
            issued = auth_repo.issue_token(
                conn, project_id, now, name="first", ttl_s=ttl_of(rt, body.expires_in_s)
            )
            return project_id, issued

    project_id, issued = await run_in_threadpool(create)
    return {
        "project": {"id": project_id, "name": body.name},
        "token": issued.secret,
        "token_info": token_view(issued.info, now),
    }

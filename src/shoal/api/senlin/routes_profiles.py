"""/v1/profile-types and /v1/profiles."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller
from shoal.api.senlin.common import body_of, listing, needs, profiles_of
from shoal.api.senlin.versions import version_of
from shoal.service.errors import NotFound
from shoal.service.senlin.bodies import (
    PROFILE_CREATE,
    PROFILE_UPDATE,
    PROFILE_VALIDATE,
    request_body,
)
from shoal.service.senlin.queries import PROFILES
from shoal.service.senlin.reads import list_query
from shoal.service.senlin.specs import NOVA_OPERATIONS, NOVA_SERVER, PROFILE_TYPES, ProfileType

router = APIRouter(prefix="/v1")


def _type_view(t: ProfileType, version: tuple[int, int], schema: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": t.type_name if version >= (1, 5) and not schema else t.name}
    if version >= (1, 5):
        out["version"] = t.version
        out["support_status"] = t.support_status()
    if schema:
        out["schema"] = t.schema
    return out


def _profile_type(name: str) -> ProfileType:
    found = PROFILE_TYPES.get(name)
    if found is None:
        raise NotFound(f"The profile_type '{name}' could not be found.")
    return found


@router.get("/profile-types")
async def list_profile_types(request: Request, who: Caller) -> dict[str, Any]:
    v = version_of(request)
    listed = [t for t in PROFILE_TYPES.values() if t.listed]
    return {"profile_types": [_type_view(t, v, False) for t in listed]}


@router.get("/profile-types/{name}")
async def get_profile_type(name: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"profile_type": _type_view(_profile_type(name), version_of(request), True)}


@router.get("/profile-types/{name}/ops")
async def profile_type_ops(name: str, request: Request, who: Caller) -> dict[str, Any]:
    needs(request, (1, 4))
    found = _profile_type(name)
    return {"operations": NOVA_OPERATIONS if found.name == NOVA_SERVER else {}}


@router.get("/profiles")
async def list_profiles(request: Request, who: Caller) -> dict[str, Any]:
    wanted, paged = listing(request, PROFILES, who)
    query = list_query(who.project_id, None, wanted, paged, "created_at")
    return {"profiles": await run_in_threadpool(profiles_of(request).page, query)}


@router.post("/profiles", status_code=201)
async def create_profile(request: Request, who: Caller) -> JSONResponse:
    data = request_body(await body_of(request), PROFILE_CREATE)
    profile = await run_in_threadpool(profiles_of(request).create, who, data)
    return JSONResponse({"profile": profile}, status_code=201)


@router.post("/profiles/validate")
async def validate_profile(request: Request, who: Caller) -> dict[str, Any]:
    data = request_body(await body_of(request), PROFILE_VALIDATE)
    return {"profile": await run_in_threadpool(profiles_of(request).validate, who, data)}


@router.get("/profiles/{ref}")
async def get_profile(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"profile": await run_in_threadpool(profiles_of(request).get, who, ref)}


@router.patch("/profiles/{ref}")
async def update_profile(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    data = request_body(await body_of(request), PROFILE_UPDATE)
    return {"profile": await run_in_threadpool(profiles_of(request).update, who, ref, data)}


@router.delete("/profiles/{ref}", status_code=204)
async def delete_profile(ref: str, request: Request, who: Caller) -> Response:
    await run_in_threadpool(profiles_of(request).delete, who, ref)
    return Response(status_code=204)

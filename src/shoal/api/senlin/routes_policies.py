"""/v1/policy-types, /v1/policies, and a cluster's policy bindings."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller
from shoal.api.senlin.common import attach_of, body_of, listing, policies_of, reads_of
from shoal.api.senlin.versions import version_of
from shoal.service.errors import NotFound
from shoal.service.senlin.bodies import POLICY_CREATE, POLICY_UPDATE, POLICY_VALIDATE, request_body
from shoal.service.senlin.policies import POLICY_TYPES, PolicyType
from shoal.service.senlin.queries import CLUSTER_POLICIES, POLICIES
from shoal.service.senlin.reads import list_query, matches, page

router = APIRouter(prefix="/v1")


def _type_view(t: PolicyType, version: tuple[int, int], schema: bool) -> dict[str, Any]:
    bare = version >= (1, 5) and not schema
    out: dict[str, Any] = {"name": t.name.rsplit("-", 1)[0] if bare else t.name}
    if version >= (1, 5):
        out["version"] = t.name.rsplit("-", 1)[1]
        out["support_status"] = t.support_status()
    if schema:
        out["schema"] = t.schema
    return out


@router.get("/policy-types")
async def list_policy_types(request: Request, who: Caller) -> dict[str, Any]:
    v = version_of(request)
    return {"policy_types": [_type_view(t, v, False) for t in POLICY_TYPES.values()]}


@router.get("/policy-types/{name}")
async def get_policy_type(name: str, request: Request, who: Caller) -> dict[str, Any]:
    found = POLICY_TYPES.get(name)
    if found is None:
        raise NotFound(f"The policy_type '{name}' could not be found.")
    return {"policy_type": _type_view(found, version_of(request), True)}


@router.get("/policies")
async def list_policies(request: Request, who: Caller) -> dict[str, Any]:
    wanted, paged = listing(request, POLICIES, who)
    scope = None if who.is_admin and paged.everyone else who.project_id
    query = list_query(scope, None, wanted, paged, "created_at")
    return {"policies": await run_in_threadpool(policies_of(request).page, who, query)}


@router.post("/policies", status_code=201)
async def create_policy(request: Request, who: Caller) -> JSONResponse:
    data = request_body(await body_of(request), POLICY_CREATE)
    policy = await run_in_threadpool(policies_of(request).create, who, data)
    return JSONResponse({"policy": policy}, status_code=201)


@router.post("/policies/validate")
async def validate_policy(request: Request, who: Caller) -> dict[str, Any]:
    data = request_body(await body_of(request), POLICY_VALIDATE)
    return {"policy": await run_in_threadpool(policies_of(request).validate, who, data)}


@router.get("/policies/{ref}")
async def get_policy(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"policy": await run_in_threadpool(policies_of(request).get, who, ref)}


@router.patch("/policies/{ref}")
async def update_policy(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    data = request_body(await body_of(request), POLICY_UPDATE)
    return {"policy": await run_in_threadpool(policies_of(request).update, who, ref, data)}


@router.delete("/policies/{ref}", status_code=204)
async def delete_policy(ref: str, request: Request, who: Caller) -> Response:
    await run_in_threadpool(policies_of(request).delete, who, ref)
    return Response(status_code=204)


@router.get("/clusters/{ref}/policies")
async def list_cluster_policies(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    wanted, paged = listing(request, CLUSTER_POLICIES, who)
    cluster_id = await run_in_threadpool(reads_of(request).cluster_id, who, ref)
    found = await run_in_threadpool(attach_of(request).bindings, who, cluster_id)
    shown = [b for b in found if matches({**b, "enabled": str(b.get("enabled")).lower()}, wanted)]
    return {"cluster_policies": page(shown, paged, "policy_name")}


@router.get("/clusters/{ref}/policies/{policy}")
async def get_cluster_policy(
    ref: str, policy: str, request: Request, who: Caller
) -> dict[str, Any]:
    cluster_id = await run_in_threadpool(reads_of(request).cluster_id, who, ref)
    policy_id = (await run_in_threadpool(policies_of(request).get, who, policy))["id"]
    for b in await run_in_threadpool(attach_of(request).bindings, who, cluster_id):
        if b["policy_id"] == policy_id:
            return {"cluster_policy": b}
    raise NotFound(f"The policy '{policy}' is not found attached to the specified cluster '{ref}'.")

"""The seed blueprint's endpoints, as written: /v2/{tenant_id}/vclusters.

A vcluster is a Shoal cluster created from the blueprint's document; its instances are the
cluster's nodes and its groupings the cluster's groupings. `tenant_id` must be the caller's
project (an admin may name any project); anything else is 404, as for a missing cluster.
The routes are async (one reads the raw body); every database read runs in the thread pool,
never on the event loop.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.service.errors import NotFound
from shoal.service.views import iso
from shoal.store import auth as auth_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.records import ClusterRecord, Principal

router = APIRouter(
    prefix="/v2/{tenant_id}/vclusters",
    tags=["vcluster (seed blueprint)"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)


def _tenant(request: Request, who: Principal, tenant_id: str) -> Principal:
    """The project a route acts on (reads the database: call it in the thread pool)."""
    if tenant_id == who.project_id:
        return who
    if who.is_admin:
        rt = runtime_of(request)
        with rt.db.reading() as conn:
            project = auth_repo.project_id_by_name(conn, tenant_id)
        if project is not None:
            return Principal(project_id=project, is_admin=False)
    raise NotFound(f"no tenant {tenant_id!r} for this token")


def vcluster_view(request: Request, c: ClusterRecord) -> dict[str, Any]:
    """A vcluster's answer with its instances (reads the database: call it in the thread
    pool)."""
    rt = runtime_of(request)
    with rt.db.reading() as conn:
        nodes = node_repo.list_nodes(conn, c.id)
    return {
        "id": c.id,
        "name": c.name,
        "tenant_id": c.project_id,
        "status": str(c.status),
        "status_reason": c.status_reason,
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
        "instances": [
            {
                "id": n.id,
                "name": n.name,
                "type": str(n.kind),
                "status": str(n.status),
                "host": n.host,
                "availability_zone": n.zone,
                "address": n.address,
            }
            for n in nodes
        ],
        "groupings": [
            {
                "name": g["name"],
                "membersRef": g["members"],
                "spec": {k: v for k, v in g.items() if k not in ("name", "members")},
            }
            for g in c.document.get("groupings", [])
        ],
    }


@router.post(
    "",
    status_code=202,
    response_model=schemas.VClusterAccepted,
    openapi_extra=schemas.raw_body("A vcluster document (the seed blueprint's JSON)."),
)
async def create_vcluster(
    tenant_id: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    tenant = await run_in_threadpool(_tenant, request, who, tenant_id)
    sub = await run_in_threadpool(rt.service.create, tenant, await request.body())
    view = await run_in_threadpool(vcluster_view, request, sub.cluster)
    response.headers["Location"] = f"/v1/actions/{sub.action.id}"
    return {"vcluster": view, "action": sub.action.id}


@router.get("", response_model=schemas.VClusterList)
async def list_vclusters(tenant_id: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    tenant = await run_in_threadpool(_tenant, request, who, tenant_id)

    def read() -> list[ClusterRecord]:
        with rt.db.reading() as conn:
            return cluster_repo.list_clusters(conn, tenant.project_id)

    found = await run_in_threadpool(read)
    return {"vclusters": [{"id": c.id, "name": c.name, "status": str(c.status)} for c in found]}


@router.get("/{vcluster_id}", response_model=schemas.OneVCluster)
async def get_vcluster(
    tenant_id: str, vcluster_id: str, request: Request, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    tenant = await run_in_threadpool(_tenant, request, who, tenant_id)
    c = await run_in_threadpool(rt.queries.cluster_record, tenant, vcluster_id)
    return {"vcluster": await run_in_threadpool(vcluster_view, request, c)}


@router.delete(
    "/{vcluster_id}",
    status_code=202,
    response_model=schemas.VClusterAccepted,
)
async def delete_vcluster(
    tenant_id: str, vcluster_id: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    tenant = await run_in_threadpool(_tenant, request, who, tenant_id)
    sub = await run_in_threadpool(rt.service.delete, tenant, vcluster_id)
    response.headers["Location"] = f"/v1/actions/{sub.action.id}"
    return {"action": sub.action.id}

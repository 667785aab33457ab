"""Native /v1 clusters and their node groups."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.bodies import ClusterActionBody
from shoal.api.pages import MAX_PAGE, page_size
from shoal.api.responses import accepted
from shoal.service.edits import Resize
from shoal.service.errors import Invalid

router = APIRouter(
    prefix="/v1/clusters",
    tags=["clusters"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)

_DOCUMENT = schemas.raw_body(
    "A cluster document: native YAML or JSON, or vcluster JSON.", yaml=True
)


async def json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object, or a 422 saying why not."""
    raw = await request.body()
    try:
        data = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise Invalid("the body is not JSON", [{"path": "", "message": str(e)}]) from None
    if not isinstance(data, dict):
        raise Invalid("the body must be a JSON object", [{"path": "", "message": "not an object"}])
    return data


@router.post("", status_code=202, response_model=schemas.Accepted, openapi_extra=_DOCUMENT)
async def create_cluster(request: Request, response: Response, who: Caller) -> dict[str, Any]:
    """Create a cluster from a document: native YAML/JSON, or the seed's vcluster JSON."""
    body = await request.body()
    rt = runtime_of(request)
    sub = await run_in_threadpool(rt.service.create, who, body)
    return accepted(sub, response)


@router.get("", response_model=schemas.ClusterList)
async def list_clusters(
    request: Request,
    who: Caller,
    limit: Annotated[int | None, Query(ge=1, json_schema_extra={"maximum": MAX_PAGE})] = None,
    marker: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """A page of at most `limit` clusters (default and maximum: the page maximum), oldest
    first, after the cluster `marker`; `next_marker` names the next page while more follow."""
    size = page_size(limit)
    rt = runtime_of(request)
    page, after = await run_in_threadpool(rt.queries.clusters_page, who, size, marker)
    return {"clusters": page, **({"next_marker": after} if after else {})}


@router.get("/{ref}", response_model=schemas.OneCluster)
async def get_cluster(
    ref: str,
    request: Request,
    who: Caller,
    nodes: Annotated[int, Query(ge=0, json_schema_extra={"maximum": MAX_PAGE})] = 0,
) -> dict[str, Any]:
    """One cluster: its node groups and node counts by status; with `nodes=N` (at most a page)
    also its first N nodes and `nodes_next_marker` for `GET /v1/nodes?cluster=&marker=`."""
    size = page_size(nodes, "nodes")
    rt = runtime_of(request)
    return {"cluster": await run_in_threadpool(rt.queries.cluster, who, ref, size)}


@router.put("/{ref}", status_code=202, response_model=schemas.Accepted, openapi_extra=_DOCUMENT)
async def apply_cluster(
    ref: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    """Replace the cluster's document (apply); Shoal plans the difference."""
    body = await request.body()
    rt = runtime_of(request)
    sub = await run_in_threadpool(rt.service.update, who, ref, body)
    return accepted(sub, response)


@router.post(
    "/{ref}/plan",
    response_model=schemas.OnePlan,
    openapi_extra=schemas.raw_body(
        "The document to compare with; none: the current one.", yaml=True, required=False
    ),
)
async def plan_cluster(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    """What applying a document (the body; empty: the current one) would do, changing nothing."""
    rt = runtime_of(request)
    body = await request.body()
    return {"plan": await run_in_threadpool(rt.service.preview, who, ref, body or None)}


@router.delete("/{ref}", status_code=202, response_model=schemas.Accepted)
async def delete_cluster(
    ref: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    return accepted(await run_in_threadpool(rt.service.delete, who, ref), response)


@router.post("/{ref}/actions", status_code=202, response_model=schemas.Accepted)
async def cluster_action(
    ref: str, body: ClusterActionBody, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    """One operation: scale_out, scale_in, resize, add_nodes, del_nodes, recover or
    scale_workload (a workload's exact replica count)."""
    rt = runtime_of(request)
    svc = rt.service
    if body.scale_out is not None or body.scale_in is not None:
        out = body.scale_out is not None
        op = body.scale_out or body.scale_in
        assert op is not None
        sub = await run_in_threadpool(
            lambda: svc.scale(who, ref, out=out, count=op.count, nodegroup=op.nodegroup)
        )
    elif body.resize is not None:
        r = body.resize
        sub = await run_in_threadpool(
            lambda: svc.resize(
                who,
                ref,
                Resize(
                    r.adjustment_type,
                    r.number,
                    r.nodegroup,
                    min_step=r.min_step,
                    strict=r.strict,
                    min_size=r.min_size,
                    max_size=r.max_size,
                ),
            )
        )
    elif body.add_nodes is not None:
        nodes = [rt.profiles.inline(who, n) for n in body.add_nodes.nodes]
        sub = await run_in_threadpool(svc.add_nodes, who, ref, nodes)
    elif body.scale_workload is not None:
        sw = body.scale_workload
        sub = await run_in_threadpool(svc.scale_workload, who, ref, sw.workload, sw.replicas)
    elif body.recover is not None:
        rec = body.recover
        sub = await run_in_threadpool(svc.recover, who, ref, rec.nodes, rec.how)
    else:
        assert body.del_nodes is not None
        sub = await run_in_threadpool(svc.del_nodes, who, ref, body.del_nodes.nodes)
    return accepted(sub, response)


@router.get("/{ref}/nodegroups", response_model=schemas.NodeGroupList)
async def list_nodegroups(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"nodegroups": await run_in_threadpool(rt.queries.nodegroups, who, ref)}


@router.post(
    "/{ref}/nodegroups",
    status_code=202,
    response_model=schemas.Accepted,
    openapi_extra=schemas.raw_body("A node group, as in a cluster document."),
)
async def create_nodegroup(
    ref: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    group = rt.profiles.inline(who, await json_object(request))
    return accepted(await run_in_threadpool(rt.service.nodegroup_create, who, ref, group), response)


@router.get("/{ref}/nodegroups/{name}", response_model=schemas.OneNodeGroup)
async def get_nodegroup(ref: str, name: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"nodegroup": await run_in_threadpool(rt.queries.nodegroup, who, ref, name)}


@router.patch(
    "/{ref}/nodegroups/{name}",
    status_code=202,
    response_model=schemas.Accepted,
    openapi_extra=schemas.raw_body("The node group's fields to change."),
)
async def update_nodegroup(
    ref: str, name: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    changes = await json_object(request)
    return accepted(
        await run_in_threadpool(rt.service.nodegroup_update, who, ref, name, changes), response
    )


@router.delete("/{ref}/nodegroups/{name}", status_code=202, response_model=schemas.Accepted)
async def delete_nodegroup(
    ref: str, name: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    return accepted(await run_in_threadpool(rt.service.nodegroup_delete, who, ref, name), response)

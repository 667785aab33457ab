"""/v1/clusters and their actions. Every change answers 202 with `Location: .../actions/{id}`."""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller
from shoal.api.senlin.common import (
    accepted,
    accepted_empty,
    body_of,
    clusters_of,
    listing,
    needs,
    reads_of,
)
from shoal.api.senlin.versions import version_of
from shoal.service.senlin.action_bodies import parse_action
from shoal.service.senlin.bodies import CLUSTER_CREATE, CLUSTER_UPDATE, request_body
from shoal.service.senlin.create_body import parse_create
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.queries import CLUSTERS
from shoal.service.senlin.reads import Paging
from shoal.service.senlin.shapes import NodeView

router = APIRouter(prefix="/v1/clusters")


@router.get("")
async def list_clusters(request: Request, who: Caller) -> dict[str, Any]:
    wanted, paged = listing(request, CLUSTERS, who)
    found = await run_in_threadpool(reads_of(request).clusters, who, wanted, paged)
    return {"clusters": found}


@router.post("", status_code=202)
async def create_cluster(request: Request, who: Caller) -> JSONResponse:
    body = parse_create(request_body(await body_of(request), CLUSTER_CREATE))
    sub = await run_in_threadpool(clusters_of(request).create, who, body)
    view = await run_in_threadpool(reads_of(request).cluster, who, sub.cluster.id)
    return accepted(request, {"cluster": view}, sub.action.id)


@router.get("/{ref}")
async def get_cluster(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"cluster": await run_in_threadpool(reads_of(request).cluster, who, ref)}


@router.patch("/{ref}", status_code=202)
async def update_cluster(ref: str, request: Request, who: Caller) -> JSONResponse:
    data = request_body(await body_of(request), CLUSTER_UPDATE)
    if version_of(request) < (1, 6):
        data.pop("profile_only", None)  # Senlin reads it from 1.6 on
    reads = reads_of(request)
    cluster_id = await run_in_threadpool(reads.cluster_id, who, ref)
    sub = await run_in_threadpool(clusters_of(request).update, who, cluster_id, data)
    view = await run_in_threadpool(reads.cluster, who, sub.cluster.id)
    return accepted(request, {"cluster": view}, sub.action.id)


@router.delete("/{ref}", status_code=202, response_class=Response)
async def delete_cluster(ref: str, request: Request, who: Caller) -> Response:
    reads = reads_of(request)
    cluster_id = await run_in_threadpool(reads.cluster_id, who, ref)
    sub = await run_in_threadpool(clusters_of(request).delete, who, cluster_id)
    return accepted_empty(request, sub.action.id)


@router.post("/{ref}/actions", status_code=202)
async def cluster_action(ref: str, request: Request, who: Caller) -> JSONResponse:
    """One of scale_out, scale_in, resize, add_nodes, del_nodes, check, recover."""
    action = parse_action(await body_of(request))
    reads = reads_of(request)
    cluster_id = await run_in_threadpool(reads.cluster_id, who, ref)
    sub = await run_in_threadpool(clusters_of(request).act, who, cluster_id, action)
    return accepted(request, {"action": sub.action.id}, sub.action.id)


@router.get("/{ref}/attrs/{path:path}")
async def collect(ref: str, path: str, request: Request, who: Caller) -> dict[str, Any]:
    """An attribute of every node of a cluster (1.2), by a dotted path into the node's
    detailed view: `name`, `details.status`."""
    needs(request, (1, 2))
    if not path or path == "None":
        raise BadRequest("Required path attribute is missing.")
    reads = reads_of(request)
    cluster_id = await run_in_threadpool(reads.cluster_id, who, ref)
    nodes: list[NodeView] = []
    marker: str | None = None
    while True:  # every node, a page at a time (Senlin answers for all of them)
        found = await run_in_threadpool(
            partial(reads.nodes, details=True),
            who,
            cluster_id,
            {},
            Paging(marker=marker, everyone=True),
        )
        nodes += found.nodes
        marker = found.next_marker
        if marker is None:
            break
    out = []
    for node in nodes:
        value: Any = node
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            out.append({"id": node["id"], "value": value})
    return {"cluster_attributes": out}

"""`GET /v1/clusters/{ref}/networks`: the cluster's networks, rules, ports, floating IPs and
load balancers with their members' health (issue 26; what the dashboard's network panel shows).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.documents import cluster_from_tree
from shoal.model.cluster import ClusterSpec
from shoal.model.problems import InvalidDocument
from shoal.runtime import Runtime
from shoal.service.errors import Conflict
from shoal.service.networks import cluster_networking, workload_pools
from shoal.store import nodes as node_repo
from shoal.store import workloads as replica_repo
from shoal.store.records import ClusterRecord, NodeRecord, Principal
from shoal.store.workloads import ReplicaRow

router = APIRouter(
    prefix="/v1/clusters",
    tags=["clusters"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)


class ClusterNetworking(schemas._Out):
    networking: schemas.JsonObject


def _read(
    rt: Runtime, who: Principal, ref: str
) -> tuple[ClusterRecord, ClusterSpec, list[NodeRecord], list[ReplicaRow]]:
    c = rt.queries.cluster_record(who, ref)
    with rt.db.reading() as conn:
        nodes = node_repo.list_nodes(conn, c.id)
    try:
        spec = cluster_from_tree(c.document, rt.inventory)
    except InvalidDocument as bad:
        raise Conflict(f"the cluster's stored document no longer reads: {bad}") from None
    rows: list[ReplicaRow] = []
    if workload_pools(spec):  # pools over workloads: their ready replicas are the members
        with rt.db.reading() as conn:
            rows = list(replica_repo.load(conn, [c.id]).get(c.id, {}).values())
    return c, spec, nodes, rows


@router.get("/{ref}/networks", response_model=ClusterNetworking)
async def get_networking(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    c, spec, nodes, rows = await run_in_threadpool(_read, rt, who, ref)
    return {"networking": await cluster_networking(rt.provider, c, spec, nodes, rows)}

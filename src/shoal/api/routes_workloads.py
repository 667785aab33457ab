"""Native /v1 view of a cluster's workloads' replicas (issue 22): node and readiness, paged."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.service.replicas import MAX_PAGE, replicas

router = APIRouter(
    prefix="/v1",
    tags=["workloads"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)


@router.get("/clusters/{ref}/workloads", response_model=schemas.ReplicaPage)
async def list_replicas(
    ref: str,
    request: Request,
    who: Caller,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1000,
    after: Annotated[str | None, Query(max_length=128)] = None,
) -> dict[str, Any]:
    """Replicas ordered by name, `limit` at a time; `next` is the `after` of the next page."""
    rt = runtime_of(request)
    return await run_in_threadpool(replicas, rt.db, who, ref, limit, after)

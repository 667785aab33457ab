"""`GET /v1/nodes/{id}/log`: the end of a node's own log, for `shoal logs NODE`.

Only the `local` provider keeps node logs Shoal can read (each server process writes
`node.log` in its working directory); other providers answer 409 saying so. The node is looked
up with the caller's scope first, so a tenant reads only its own nodes' logs; `bytes` is
limited before anything is read.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.service.errors import Conflict, NotFound

MAX_LOG_BYTES = 1024 * 1024
DEFAULT_LOG_BYTES = 64 * 1024

router = APIRouter(prefix="/v1", tags=["nodes, actions, events"])


@router.get(
    "/nodes/{node_id}/log",
    response_class=PlainTextResponse,
    responses={
        **schemas.JSON_ERRORS,
        200: {
            "description": "The end of the node's log, as text.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
    },
)
async def get_node_log(
    node_id: str,
    request: Request,
    who: Caller,
    size: Annotated[int, Query(alias="bytes", ge=1, le=MAX_LOG_BYTES)] = DEFAULT_LOG_BYTES,
) -> PlainTextResponse:
    rt = runtime_of(request)
    node = await run_in_threadpool(rt.queries.node, who, node_id)
    logs = rt.capabilities.node_logs
    if logs is None:
        raise Conflict(f"the {rt.provider.name} provider keeps no node logs Shoal can read")
    physical = node.physical_id
    text = None
    if node.kind == "server" and physical:
        text = await run_in_threadpool(logs.node_log, physical, size)
    if text is None:
        raise NotFound(f"node {node.name} has no log (it has no running server here)")
    return PlainTextResponse(text)

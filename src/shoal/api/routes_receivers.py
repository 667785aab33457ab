"""Receivers (/v1/receivers) and their webhooks (/v1/webhooks/{id}/trigger).

Managing receivers needs a bearer token like everything else; triggering one does not: the
`token` in its webhook URL is the credential, and any mismatch answers 404.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.errors import http_status
from shoal.api.pages import MAX_PAGE, page_size
from shoal.api.responses import accepted
from shoal.api.routes_clusters import json_object
from shoal.service.receivers import ReceiverService
from shoal.service.senlin_webhooks import webhook_secret
from shoal.service.triggers import Cooldown

router = APIRouter(
    prefix="/v1", tags=["receivers"], responses=schemas.ERRORS, route_class=schemas.ExactRoute
)


def receivers_of(request: Request) -> ReceiverService:
    return ReceiverService(runtime_of(request).service)


@router.post(
    "/receivers",
    status_code=201,
    response_model=schemas.OneReceiver,
    openapi_extra=schemas.raw_body(
        "`name`, `cluster`, `action` (scale_out, scale_in, resize, recover), "
        "optional `nodegroup` (or `workload`: scale a workload's replicas) and `params`."
    ),
)
async def create_receiver(request: Request, who: Caller) -> dict[str, Any]:
    """A webhook for a cluster action; the answer holds its URL, shown only this once."""
    body = await json_object(request)
    found = await run_in_threadpool(receivers_of(request).create, who, body)
    return {"receiver": found}


@router.get("/receivers", response_model=schemas.ReceiverList)
async def list_receivers(
    request: Request,
    who: Caller,
    limit: Annotated[int | None, Query(ge=1, json_schema_extra={"maximum": MAX_PAGE})] = None,
    marker: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """A page of at most `limit` receivers (default and maximum: the page maximum), oldest
    first, after the receiver `marker`; `next_marker` names the next page while more follow."""
    size = page_size(limit)
    page, after = await run_in_threadpool(receivers_of(request).page, who, size, marker)
    return {"receivers": page, **({"next_marker": after} if after else {})}


@router.get("/receivers/{ref}", response_model=schemas.OneReceiver)
async def get_receiver(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"receiver": await run_in_threadpool(receivers_of(request).get, who, ref)}


@router.delete("/receivers/{ref}", status_code=204)
async def delete_receiver(ref: str, request: Request, who: Caller) -> Response:
    await run_in_threadpool(receivers_of(request).delete, who, ref)
    return Response(status_code=204)


@router.post(
    "/webhooks/{receiver_id}/trigger",
    status_code=202,
    response_model=schemas.Accepted,
    responses={409: {"model": schemas.ErrorBody, "description": "Cooling down (Retry-After)"}},
)
async def trigger(
    receiver_id: str,
    request: Request,
    response: Response,
    token: str | None = None,
    version: str | None = Query(None, alias="V"),
) -> dict[str, Any] | JSONResponse:
    """Run the receiver's action. No bearer token: `token` is the receiver's secret (an
    imported Senlin receiver's `?V=1` URL: service/senlin_webhooks.py)."""
    svc = receivers_of(request)
    secret = webhook_secret(receiver_id, token, version)
    try:
        sub = await run_in_threadpool(svc.trigger, receiver_id, secret)
    except Cooldown as e:
        wait = max(0, math.ceil(e.ends_at - svc.clock.now()))
        return JSONResponse(
            e.body(), status_code=http_status(e), headers={"Retry-After": str(wait)}
        )
    return accepted(sub, response)

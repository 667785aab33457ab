"""/v1/receivers, and /v1/webhooks/{id}/trigger (no token: the URL's `token` is the secret)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller, runtime_of
from shoal.api.senlin.common import accepted, body_of, listing
from shoal.service.receivers import ReceiverService
from shoal.service.senlin.bodies import RECEIVER_CREATE, RECEIVER_UPDATE, request_body
from shoal.service.senlin.queries import RECEIVERS
from shoal.service.senlin.reads import list_query
from shoal.service.senlin.receivers import SenlinReceivers
from shoal.service.senlin_webhooks import webhook_secret

router = APIRouter(prefix="/v1")


def _native(request: Request) -> ReceiverService:
    return ReceiverService(runtime_of(request).service)


def _receivers(request: Request) -> SenlinReceivers:
    return SenlinReceivers(_native(request))


def alarm_url(request: Request, receiver_id: str, secret: str) -> str:
    root = request.scope.get("root_path", "")
    base = request.url.replace(path=f"{root}/v1/webhooks/{receiver_id}/trigger", query="")
    return f"{base}?V=2&token={secret}"


@router.post("/receivers", status_code=201)
async def create_receiver(request: Request, who: Caller) -> JSONResponse:
    data = request_body(await body_of(request), RECEIVER_CREATE)
    native, secret = await run_in_threadpool(_receivers(request).create, who, data)
    view = dict(native, channel={"alarm_url": alarm_url(request, native["id"], secret)})
    return JSONResponse({"receiver": view}, status_code=201)


@router.get("/receivers")
async def list_receivers(request: Request, who: Caller) -> dict[str, Any]:
    wanted, paged = listing(request, RECEIVERS, who)
    scope = None if who.is_admin and paged.everyone else who.project_id
    query = list_query(scope, None, wanted, paged, "created_at")
    return {"receivers": await run_in_threadpool(_receivers(request).page, query)}


@router.get("/receivers/{ref}")
async def get_receiver(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"receiver": await run_in_threadpool(_receivers(request).get, who, ref)}


@router.patch("/receivers/{ref}")
async def update_receiver(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    data = request_body(await body_of(request), RECEIVER_UPDATE)
    return {"receiver": await run_in_threadpool(_receivers(request).update, who, ref, data)}


@router.delete("/receivers/{ref}", status_code=204)
async def delete_receiver(ref: str, request: Request, who: Caller) -> Response:
    await run_in_threadpool(_receivers(request).delete, who, ref)
    return Response(status_code=204)


@router.post("/webhooks/{receiver_id}/trigger", status_code=202)
async def trigger(
    receiver_id: str,
    request: Request,
    token: str | None = None,
    version: str | None = Query(None, alias="V"),
) -> JSONResponse:
    await body_of(request)  # Senlin's optional {"params": ...}; a receiver's own params rule
    secret = webhook_secret(receiver_id, token, version)  # `?V=1`: an imported receiver
    sub = await run_in_threadpool(_native(request).trigger, receiver_id, secret)
    return accepted(request, {"action": sub.action.id}, sub.action.id)

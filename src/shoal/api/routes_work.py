"""Native /v1 nodes, actions and events (with a long-poll for new events)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.pages import MAX_EVENT_PAGE, MAX_PAGE, page_size
from shoal.api.shares import Held, shares_of
from shoal.api.watermark import Watermark
from shoal.service.errors import Invalid
from shoal.service.views import action_view

router = APIRouter(
    prefix="/v1",
    tags=["nodes, actions, events"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)

# How often a long poll or a stream looks for new events, and how long a stream may stay
# silent before a keep-alive comment.
_EVENT_POLL_S = 0.2
_KEEPALIVE_S = 15.0

# Event ids are the events table's INTEGER key (32 bits on PostgreSQL); a larger `after`
# would overflow the driver or the database instead of matching nothing.
MAX_EVENT_ID = 2**31 - 1
EventId = Annotated[int, Query(ge=0, le=MAX_EVENT_ID)]


@router.get("/nodes", response_model=schemas.NodeList)
async def list_nodes(
    request: Request,
    who: Caller,
    cluster: str | None = None,
    limit: Annotated[int | None, Query(ge=1, json_schema_extra={"maximum": MAX_PAGE})] = None,
    marker: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    """A page of at most `limit` nodes (default and maximum: MAX_PAGE) after the node `marker`,
    paged in SQL; `next_marker` names the next page's marker while more follow."""
    size = page_size(limit)
    rt = runtime_of(request)
    page, after = await run_in_threadpool(rt.queries.nodes_page, who, cluster, size, marker)
    body = schemas.NodeList(nodes=page, **({"next_marker": after} if after else {}))
    # Encoded by pydantic in one pass, with the keys `response_model` would keep (issue 23:
    # FastAPI's own path validated and encoded a page of 1,000 nodes again in Python, most of
    # the first page's time).
    return Response(body.model_dump_json(exclude_unset=True), media_type="application/json")


@router.get("/nodes/{node_id}", response_model=schemas.OneNode)
async def get_node(node_id: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)
    return {"node": await run_in_threadpool(rt.queries.node, who, node_id)}


@router.get("/actions", response_model=schemas.ActionList)
async def list_actions(
    request: Request,
    who: Caller,
    cluster: str | None = None,
    all: bool = False,
    limit: Annotated[int | None, Query(ge=1, json_schema_extra={"maximum": MAX_PAGE})] = None,
    marker: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """A page of at most `limit` actions (default and maximum: the page maximum), oldest
    first, after the action `marker`; `next_marker` names the next page while more follow."""
    size = page_size(limit)
    rt = runtime_of(request)
    page, after = await run_in_threadpool(rt.queries.actions, who, cluster, all, size, marker)
    return {"actions": page, **({"next_marker": after} if after else {})}


@router.get("/actions/{action_id}", response_model=schemas.OneAction)
async def get_action(action_id: str, request: Request, who: Caller) -> schemas.OneAction:
    rt = runtime_of(request)
    return await run_in_threadpool(rt.queries.action, who, action_id)


@router.post("/actions/{action_id}/cancel", status_code=202, response_model=schemas.CancelledAction)
async def cancel_action(
    action_id: str, request: Request, response: Response, who: Caller
) -> dict[str, Any]:
    rt = runtime_of(request)
    action = await run_in_threadpool(rt.service.cancel, who, action_id)
    response.headers["Location"] = f"/v1/actions/{action.id}"
    return {"action": action_view(action)}


class EventStream(StreamingResponse):
    """Server-sent events; `held` (the caller's place among its streams) ends with it."""

    media_type = "text/event-stream"
    held: Held | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.held is not None:
                self.held.release()


@router.get(
    "/events/stream",
    response_class=EventStream,
    responses={
        **schemas.JSON_ERRORS,
        200: {
            "description": "Server-sent events, one per Shoal event, until the client leaves.",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
    },
)
async def stream_events(
    request: Request,
    who: Caller,
    cluster: str | None = None,
    after: EventId = 0,
    last_event_id: Annotated[
        str | None, Header(max_length=20, description="Resume after this event id (SSE).")
    ] = None,
) -> EventStream:
    """Server-sent events: every event after `after`, then new ones as they happen.

    Each message has `id` (the event id: reconnect with `after` or `Last-Event-ID`), `event`
    (CLUSTER, NODE or ACTION) and `data` (the event as JSON).
    """
    rt = runtime_of(request)
    start = after if last_event_id is None else _event_id(last_event_id)
    # The caller's share first (a flood over its limit is a 429 before any query: issue 29),
    # then fail before the stream starts when the cluster is unknown (a 404, not a broken
    # stream), giving the place back.
    held = shares_of(request, "streams").take(request, who)
    try:
        await run_in_threadpool(rt.queries.events, who, cluster, start, 1)
    except BaseException:
        held.release()
        raise

    async def messages() -> AsyncIterator[str]:
        last = mark = start  # mark: the newest id (any project's) when this last looked
        quiet = 0.0
        while not (_stopping(request) or await request.is_disconnected()):
            found = []
            newest = await _watermark(request).newest()
            if newest > mark:
                mark = newest
                found = await run_in_threadpool(rt.queries.events, who, cluster, last, 500)
            for e in found:
                last = e.id
                data = json.dumps(e.model_dump(mode="json"))
                yield f"id: {e.id}\nevent: {e.obj_type}\ndata: {data}\n\n"
            if found:
                quiet = 0.0
                continue
            await asyncio.sleep(_EVENT_POLL_S)
            quiet += _EVENT_POLL_S
            if quiet >= _KEEPALIVE_S:
                quiet = 0.0
                yield ": keep-alive\n\n"

    stream = EventStream(
        messages(),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    stream.held = held
    return stream


def _watermark(request: Request) -> Watermark:
    """The app's shared newest-event-id (made on first use)."""
    state = request.app.state
    found: Watermark | None = getattr(state, "event_watermark", None)
    if found is None:
        found = state.event_watermark = Watermark(runtime_of(request), _EVENT_POLL_S)
    return found


def _stopping(request: Request) -> bool:
    """The server is shutting down (`shoal server` got SIGTERM): streams and polls end now,
    so a bounded stop is not spent waiting for clients that never leave."""
    return bool(getattr(request.app.state, "stopping", False))


def _event_id(raw: str) -> int:
    """`Last-Event-ID` as an event id, or a 422 naming the header."""
    value = raw.strip()
    if not (value.isascii() and value.isdigit()) or int(value) > MAX_EVENT_ID:
        raise Invalid(
            "Last-Event-ID must be an event id",
            [{"path": "header:last-event-id", "message": f"an integer from 0 to {MAX_EVENT_ID}"}],
        )
    return int(value)


@router.get("/events", response_model=schemas.EventPage)
async def list_events(
    request: Request,
    who: Caller,
    cluster: str | None = None,
    after: EventId = 0,
    limit: Annotated[int, Query(ge=1, json_schema_extra={"maximum": MAX_EVENT_PAGE})] = 500,
    wait: Annotated[float, Query(ge=0, le=60)] = 0.0,
) -> dict[str, Any]:
    """Events after `after`, at most `limit` (up to the page maximum); with `wait`, hold the
    request until one arrives or time is up."""
    limit = page_size(limit, maximum=MAX_EVENT_PAGE)
    rt = runtime_of(request)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    held = shares_of(request, "long_polls").take(request, who) if wait > 0 else None
    try:
        mark = await _watermark(request).newest()
        found = await run_in_threadpool(rt.queries.events, who, cluster, after, limit)
        while not found and loop.time() < deadline and not _stopping(request):
            if await request.is_disconnected():
                break
            await asyncio.sleep(_EVENT_POLL_S)
            newest = await _watermark(request).newest()
            if newest > mark:  # something happened somewhere: is it ours?
                mark = newest
                found = await run_in_threadpool(rt.queries.events, who, cluster, after, limit)
    finally:
        if held is not None:
            held.release()
    return {"events": found, "next": found[-1].id if found else after}

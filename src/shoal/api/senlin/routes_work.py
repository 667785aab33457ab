"""/v1/nodes, /v1/actions, /v1/events and /v1/build-info."""

from __future__ import annotations

import contextlib
import socket
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from shoal import __version__
from shoal.api.auth import Caller, runtime_of
from shoal.api.senlin.common import (
    accepted,
    accepted_empty,
    body_of,
    clusters_of,
    flag,
    listing,
    needs,
    nodes_of,
    profiles_of,
    reads_of,
)
from shoal.api.senlin.versions import version_of
from shoal.service.errors import Conflict, Forbidden
from shoal.service.senlin.bodies import ACTION_UPDATE, NODE_CREATE, NODE_UPDATE, request_body
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.queries import ACTIONS, EVENTS, MAX_LIMIT, NODES
from shoal.service.senlin.requests import as_bool
from shoal.service.senlin.shapes import NodeView
from shoal.store.records import Principal
from shoal.store.senlin_nodes import NodeExtras

router = APIRouter(prefix="/v1")


@router.get("/build-info")
async def build_info(who: Caller) -> dict[str, Any]:
    revision = f"shoal-{__version__}"
    return {"build_info": {"api": {"revision": revision}, "engine": {"revision": revision}}}


@router.get("/services")
async def list_services(request: Request, who: Caller) -> dict[str, Any]:
    """The engine serving this API (1.7, admins), in Senlin's shape."""
    needs(request, (1, 7))
    if not who.is_admin:
        raise Forbidden("You are not authorized to complete this operation.")
    host = socket.gethostname()
    service = {
        "id": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"shoal-engine.{host}")),
        "binary": "shoal-engine",
        "host": host,
        "topic": "senlin-engine",
        "status": "enabled",
        "state": "up",
        "disabled_reason": None,
        "updated_at": None,
    }
    return {"services": [service]}


@router.get("/nodes")
async def list_nodes(request: Request, who: Caller) -> dict[str, Any]:
    reads = reads_of(request)
    wanted, paged = listing(request, NODES, who)
    cluster = wanted.pop("cluster_id", (None,))[0]
    details = wanted.pop("show_details", ("false",))[0] == "true"
    found = await run_in_threadpool(
        lambda: reads.nodes(
            who,
            cluster,
            wanted,
            paged,
            details=details or flag(request, "show_details"),
            tainted=version_of(request) >= (1, 13),
        )
    )
    if found.next_marker is None:
        return {"nodes": found.nodes}
    # A list asked without `limit` and cut at the page maximum says where it goes on, as
    # OpenStack lists do (`<resources>_links`, which openstacksdk follows); never otherwise,
    # so Senlin's answers keep their shape.
    after = request.url.include_query_params(limit=MAX_LIMIT, marker=found.next_marker)
    return {"nodes": found.nodes, "nodes_links": [{"rel": "next", "href": str(after)}]}


@router.post("/nodes", status_code=202)
async def create_node(request: Request, who: Caller) -> JSONResponse:
    data = request_body(await body_of(request), NODE_CREATE)
    if data.get("cluster_id") is not None:
        return await _create_member(request, who, data)
    node_id, action_id = await run_in_threadpool(nodes_of(request).create, who, data)
    view = await run_in_threadpool(_node_view, request, who, node_id)
    return accepted(request, {"node": view}, action_id)


PLAN_WAIT_S = 30.0
"""How long `POST /v1/nodes` into a cluster waits for the engine to plan the node, whose id
the answer must carry (planning normally takes milliseconds)."""


async def _create_member(request: Request, who: Principal, data: dict[str, Any]) -> JSONResponse:
    """A node created into a cluster: the cluster grows by an instance; the answer waits until
    the engine has planned it, so it can name the node's id."""
    cluster_id, sub = await run_in_threadpool(clusters_of(request).members.create_member, who, data)
    reads, clock = reads_of(request), runtime_of(request).clock
    deadline = clock.now() + PLAN_WAIT_S
    node_id = None
    while node_id is None:
        node_id = await run_in_threadpool(reads.member_id, cluster_id, str(data["name"]))
        if node_id is None:
            if clock.now() > deadline:
                return accepted(request, {"node": None}, sub.action.id)
            await clock.sleep(0.05)
    extras = NodeExtras(
        node_id,
        who.project_id,
        await run_in_threadpool(lambda: _profile_id(request, who, str(data["profile_id"]))),
        dict(data.get("metadata") or {}),
        str(data.get("role") or ""),
    )
    await run_in_threadpool(nodes_of(request).put_extras, extras)
    view = await run_in_threadpool(_node_view, request, who, node_id)
    return accepted(request, {"node": view}, sub.action.id)


def _profile_id(request: Request, who: Principal, ref: str) -> str:
    return str(profiles_of(request).get(who, ref)["id"])


def _node_view(request: Request, who: Principal, ref: str) -> NodeView:
    return reads_of(request).node(
        who, ref, details=flag(request, "show_details"), tainted=version_of(request) >= (1, 13)
    )


@router.patch("/nodes/{ref}", status_code=202)
async def update_node(ref: str, request: Request, who: Caller) -> JSONResponse:
    data = request_body(await body_of(request), NODE_UPDATE)
    node, action_id = await run_in_threadpool(nodes_of(request).update, who, ref, data)
    view = await run_in_threadpool(_node_view, request, who, node.id)
    return accepted(request, {"node": view}, action_id)


@router.post("/nodes/{ref}/actions", status_code=202)
async def node_action(ref: str, request: Request, who: Caller) -> JSONResponse:
    body = await body_of(request)
    action_id = await run_in_threadpool(nodes_of(request).act, who, ref, body)
    return accepted(request, {"action": action_id}, action_id)


@router.post("/nodes/{ref}/ops", status_code=202)
async def node_operation(ref: str, request: Request, who: Caller) -> JSONResponse:
    needs(request, (1, 4))
    body = await body_of(request)
    action_id = await run_in_threadpool(nodes_of(request).operate, who, ref, body)
    return accepted(request, {"action": action_id}, action_id)


@router.get("/nodes/{ref}")
async def get_node(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    reads = reads_of(request)
    node = await run_in_threadpool(
        lambda: reads.node(
            who,
            ref,
            details=flag(request, "show_details"),
            tainted=version_of(request) >= (1, 13),
        )
    )
    return {"node": node}


@router.delete("/nodes/{ref}", status_code=202, response_class=Response)
async def delete_node(ref: str, request: Request, who: Caller) -> Response:
    node = await run_in_threadpool(_node_view, request, who, ref)
    if node["cluster_id"]:
        sub = await run_in_threadpool(clusters_of(request).members.delete_node, who, node["id"])
        action_id = sub.action.id
    else:
        action_id = await run_in_threadpool(nodes_of(request).delete, who, node["id"])
    return accepted_empty(request, action_id)


@router.get("/actions")
async def list_actions(request: Request, who: Caller) -> dict[str, Any]:
    reads = reads_of(request)
    wanted, paged = listing(request, ACTIONS, who)
    return {"actions": await run_in_threadpool(reads.actions, who, wanted, paged)}


@router.get("/actions/{ref}")
async def get_action(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"action": await run_in_threadpool(reads_of(request).action, who, ref)}


@router.patch("/actions/{ref}", status_code=202)
async def update_action(ref: str, request: Request, who: Caller) -> Response:
    """Cancel an action (1.12); Senlin knows no other change of an action."""
    needs(request, (1, 12))
    data = request_body(await body_of(request), ACTION_UPDATE)
    if "force" in request.query_params:
        as_bool("force", request.query_params["force"])
    status = data.get("status")
    if status != "CANCELLED":
        raise BadRequest(f"Unknown status {status} for action {ref}")
    action_id = (await run_in_threadpool(reads_of(request).action, who, ref))["id"]
    service = runtime_of(request).service
    # An action already ended, or a step of a larger one: Senlin's signal changes nothing.
    with contextlib.suppress(Conflict):
        await run_in_threadpool(service.cancel, who, action_id)
    return Response(status_code=202)


@router.get("/events")
async def list_events(request: Request, who: Caller) -> dict[str, Any]:
    reads = reads_of(request)
    wanted, paged = listing(request, EVENTS, who)
    return {"events": await run_in_threadpool(reads.events, who, wanted, paged)}


@router.get("/events/{ref}")
async def get_event(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    return {"event": await run_in_threadpool(reads_of(request).event, who, ref)}

"""Software deployments over HTTP: what ran where (users), and Heat's agent protocol (nodes).

- `GET /v1/clusters/{ref}/deployments` and `GET /v1/nodes/{id}/deployments/{name}` need a
  bearer token like everything else;
- `GET /v1/software/servers/{node_id}/metadata?token=…` is what os-collect-config's `request`
  collector polls, and `POST`/`PUT /v1/software/signals/{action_id}?token=…` is where
  heat-config-notify reports a run: no bearer token, the URL's secret is the credential, and a
  mismatch answers 404. A signal's body is bounded before it is parsed.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.pages import MAX_PAGE, page_size
from shoal.engine.software.urls import SIGNAL_PATH, Urls
from shoal.model.heat_agent import MAX_SIGNAL_BYTES
from shoal.model.software import DeploymentStatus
from shoal.service.deployments import DeploymentService
from shoal.service.errors import ErrorKind, ServiceError

router = APIRouter(
    prefix="/v1", tags=["deployments"], responses=schemas.ERRORS, route_class=schemas.ExactRoute
)


class SignalTooLarge(ServiceError):
    kind = ErrorKind.TOO_LARGE
    code = "too_large"
    title = "Signal too large"


def deployments_of(request: Request) -> DeploymentService:
    return runtime_of(request).deployments


def _urls(request: Request) -> Urls:
    """Where agents reach Shoal, from configuration (`agent_url`, else where `shoal server`
    listens), never from the request: a `Host` header is the caller's to choose (issue 29)."""
    rt = runtime_of(request)
    configured = rt.engine.deployer.agent_url or rt.settings.agent_url
    if configured:
        return Urls(configured.rstrip("/"))
    bind = rt.settings.bind
    host = f"[{bind}]" if ":" in bind else bind
    return Urls(f"http://{host}:{rt.settings.port}")


@router.get("/clusters/{ref}/deployments", response_model=schemas.DeploymentList)
async def list_deployments(
    ref: str,
    request: Request,
    who: Caller,
    limit: Annotated[int | None, Query(ge=1, json_schema_extra={"maximum": MAX_PAGE})] = None,
    marker: Annotated[str | None, Query(max_length=64)] = None,
    status: DeploymentStatus | None = None,
) -> dict[str, Any]:
    """Per deployment and node: status, action, exit code, attempts, when; and where each
    deployment's rolling update stands (batch k of n, rolled back and why). A page of at most
    `limit` rows (default and maximum: MAX_PAGE) after the row `marker`, of one `status` when
    given, paged in SQL (issue 23); `next_marker` names the next page while more follow, and
    `counts` counts all the cluster's rows by status."""
    size = page_size(limit)
    service = deployments_of(request)
    page = await run_in_threadpool(service.page, who, ref, size, marker, status)
    rollouts = await run_in_threadpool(service.rollouts, who, ref)
    return {
        "deployments": page.deployments,
        "rollouts": rollouts,
        "counts": page.counts,
        **({"next_marker": page.next_marker} if page.next_marker else {}),
    }


@router.get("/nodes/{node_id}/deployments", response_model=schemas.NodeDeployments)
async def node_deployments(node_id: str, request: Request, who: Caller) -> dict[str, Any]:
    """Every deployment's last run on one node (the dashboard's node page; issue 36)."""
    node, found = await run_in_threadpool(deployments_of(request).of_node, who, node_id)
    return {
        "node": node.name,
        "node_id": node.id,
        "cluster_id": node.cluster_id,
        "deployments": found,
    }


@router.get("/nodes/{node_id}/deployments/{name}", response_model=schemas.OneDeploymentLog)
async def deployment_log(node_id: str, name: str, request: Request, who: Caller) -> dict[str, Any]:
    """One deployment's last run on a node: stdout, stderr, outputs (secrets redacted)."""
    found = await run_in_threadpool(deployments_of(request).log, who, node_id, name)
    return {"deployment": found}


@router.get("/software/servers/{node_id}/metadata", response_model=schemas.ServerMetadata)
async def server_metadata(
    node_id: str, request: Request, token: str | None = None
) -> dict[str, Any]:
    """The server's deployments as Heat serves them to os-collect-config."""
    svc = deployments_of(request)
    return await run_in_threadpool(svc.metadata, node_id, token, _urls(request))


async def _signal(action_id: str, request: Request, token: str | None) -> dict[str, Any]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_SIGNAL_BYTES:
            raise SignalTooLarge(f"a signal may hold at most {MAX_SIGNAL_BYTES} bytes")
    status = await run_in_threadpool(deployments_of(request).signal, action_id, token, body)
    return {"status": status.value}


_SIGNAL_DOC = schemas.raw_body(
    "heat-config-notify's JSON: `deploy_stdout`, `deploy_stderr`, `deploy_status_code` and "
    "the outputs at the top level."
)


@router.post(
    SIGNAL_PATH.removeprefix("/v1"),
    response_model=schemas.SignalAccepted,
    openapi_extra=_SIGNAL_DOC,
)
async def signal_post(action_id: str, request: Request, token: str | None = None) -> dict[str, Any]:
    """A deployment run finished on its node (the URL's token is the run's own secret)."""
    return await _signal(action_id, request, token)


@router.put(
    SIGNAL_PATH.removeprefix("/v1"),
    response_model=schemas.SignalAccepted,
    openapi_extra=_SIGNAL_DOC,
)
async def signal_put(action_id: str, request: Request, token: str | None = None) -> dict[str, Any]:
    """The same as POST (Heat's signal verb is configurable)."""
    return await _signal(action_id, request, token)

"""The ASGI application: routers, error handlers, the body limit, and the engine's lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.types import Message, Scope

from shoal import __version__
from shoal.api import errors, heat, redact, schemas, senlin
from shoal.api.agentgate import AgentGate
from shoal.api.characters import RefuseUnstorable
from shoal.api.keystone import KeystoneAuth
from shoal.api.limits import BodyLimit
from shoal.api.metrics import install as install_metrics
from shoal.api.requestid import RequestId
from shoal.api.routes_admin import router as admin_router
from shoal.api.routes_clusters import router as cluster_router
from shoal.api.routes_deployments import router as deployment_router
from shoal.api.routes_hosts import router as host_router
from shoal.api.routes_images import router as image_router
from shoal.api.routes_index import router as index_router
from shoal.api.routes_logs import router as logs_router
from shoal.api.routes_networks import router as networks_router
from shoal.api.routes_quotas import router as quota_router
from shoal.api.routes_receivers import router as receiver_router
from shoal.api.routes_senlin_import import router as senlin_import_router
from shoal.api.routes_tokens import router as token_router
from shoal.api.routes_vcluster import router as vcluster_router
from shoal.api.routes_work import router as work_router
from shoal.api.routes_workloads import router as workloads_router
from shoal.api.shares import ShareLimits, Shares
from shoal.api.ui import install as install_ui
from shoal.engine.software.urls import SIGNAL_PATH
from shoal.runtime import Runtime

WARM_UP_PATHS = ("/.warm-up", senlin.PREFIX + "/.warm-up", heat.PREFIX + "/.warm-up")
"""Paths no route answers: one walks every router of the app, the other (under the mount, which
the first stops at) every router of the Senlin façade."""


def create_app(
    runtime: Runtime, *, run_engine: bool = False, agent_port: int | None = None
) -> FastAPI:
    """The API over `runtime`; with `run_engine`, the app starts and stops the engine."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if run_engine:
            await runtime.engine.start()
        try:
            yield
        finally:
            if run_engine:
                await runtime.engine.stop()

    app = FastAPI(
        title="Shoal",
        version=__version__,
        description="Declare a virtual cluster once; Shoal places it whole, creates it and "
        "keeps it healthy.",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    keystone = (
        KeystoneAuth(runtime.settings, runtime.db) if runtime.settings.auth == "keystone" else None
    )
    app.state.keystone = keystone
    settings = runtime.settings  # fair shares of held-open requests (api/shares.py)
    app.state.streams = Shares(
        "event streams",
        ShareLimits(settings.max_streams_per_token, settings.max_streams_per_project),
    )
    app.state.long_polls = Shares(
        "long polls",
        ShareLimits(settings.max_long_polls_per_token, settings.max_long_polls_per_project),
    )
    errors.install(app)
    # Inside the body limit. An agent's signal body is not refused: a script's stdout may hold
    # a NUL, and the signal's parser replaces it (model/heat_agent.py), keeping the result.
    app.add_middleware(
        RefuseUnstorable,
        skip=(senlin.PREFIX, heat.PREFIX),
        body_unchecked=(SIGNAL_PATH.split("{", 1)[0],),
    )
    app.add_middleware(
        BodyLimit, limit=runtime.settings.max_body_bytes, timeout_s=runtime.settings.body_timeout_s
    )
    app.add_middleware(RequestId)  # X-Openstack-Request-Id (issue 27), outside the body limit
    if agent_port is not None:
        app.add_middleware(AgentGate, port=agent_port)  # issue 39: agents' routes only there
    for router in (cluster_router, work_router, admin_router, vcluster_router, host_router):
        app.include_router(router)
    app.include_router(receiver_router)
    app.include_router(deployment_router)  # software deployments (issue 11)
    app.include_router(quota_router)
    app.include_router(token_router)
    app.include_router(index_router)  # GET /: links to everything else
    app.include_router(logs_router)  # GET /v1/nodes/{id}/log: `shoal logs`
    app.include_router(senlin_import_router)  # POST /v1/imports/senlin (issue 28)
    app.include_router(image_router)  # POST /v1/images: `shoal image import` (issue 21)
    app.include_router(networks_router)  # GET /v1/clusters/{ref}/networks (issue 26)
    app.include_router(workloads_router)  # GET /v1/clusters/{ref}/workloads (issue 22)
    clustering = senlin.clustering_app(runtime)
    clustering.state.keystone = keystone
    senlin.mount(app, clustering)  # the Senlin v1 façade, at /clustering
    orchestration = heat.orchestration_app(runtime)
    orchestration.state.keystone = keystone
    heat.mount(app, orchestration)  # the Heat v1 façade, at /orchestration (issue 38)
    install_ui(app)  # the web dashboard at /ui
    install_metrics(app)  # GET /metrics (issue 27)

    @app.get("/healthz", tags=["meta"], response_model=schemas.Health)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1", tags=["meta"], response_model=schemas.VersionInfo)
    async def version() -> dict[str, Any]:
        return {
            "version": {"id": "v1", "status": "CURRENT", "shoal": __version__},
            "provider": runtime.provider.name,
        }

    # Webhook URLs carry their secret in the query: keep it out of the access log.
    redact.install()
    if runtime.settings.cors_origins:
        # Outermost, so preflights and errors (401, 413) carry the CORS headers too.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=runtime.settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["Location", "Retry-After", "X-Openstack-Request-Id"],
        )
    return app


async def warm_up(app: FastAPI) -> None:
    """Have `app` build now what it builds lazily on its first requests.

    Issue 23: FastAPI (0.165) builds each included router's route state (a pydantic
    TypeAdapter per field) the first time a request walks that router: 2.6 s of the engines'
    CPU of a 20,000-node create's profile, paid by each server's first requests (there, the
    benchmark's readiness check) and then walked by every full collection, as it was made after
    the start-up heap was frozen. A request that no route answers
    walks every router; made in-process, it meets no access log, and a 404 touches no metric,
    event or store. The middleware stack, built on the first call too, is built here as well.
    """

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    for path in WARM_UP_PATHS:
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [],
            "client": None,
            "server": None,
        }
        await app(scope, receive, send)

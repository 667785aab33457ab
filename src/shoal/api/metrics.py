"""`GET /metrics`: Prometheus' text format, for the admin token only (issue 27).

An operator who would rather not hand Prometheus an admin token sets `metrics_bind`: the same
exposition is then also served, without authentication, on that address alone (a thread of
prometheus-client's own HTTP server, outside the API and the engine's loop). Rendering reads
the database, so it runs in the thread pool and never on the event loop.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, start_http_server
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller
from shoal.engine.metrics import EngineCollector, EngineView, Exposition
from shoal.runtime import Runtime
from shoal.service.errors import Forbidden

log = logging.getLogger("shoal.api")
router = APIRouter(tags=["meta"])


def exposition_of(runtime: Runtime) -> Exposition:
    engine = runtime.engine
    view = EngineView(
        engine_id=engine.id,
        manages=engine.manager is not None,
        inflight=lambda: engine.inflight,
        provider=runtime.provider.name,
    )
    return Exposition(
        EngineCollector(
            runtime.db,
            runtime.clock,
            view,
            by_project=runtime.settings.metrics_project_label,
        )
    )


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
    include_in_schema=False,
)
async def metrics(request: Request, who: Caller) -> Response:
    if not who.is_admin:
        raise Forbidden("only an admin reads the metrics")
    exposition: Exposition = request.app.state.metrics
    body = await run_in_threadpool(exposition.render)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def install(app: FastAPI) -> None:
    """The route, and (with `metrics_bind`) the unauthenticated listener of its own."""
    runtime: Runtime = app.state.runtime
    exposition = exposition_of(runtime)
    app.state.metrics = exposition
    app.include_router(router)
    where = runtime.settings.metrics_bind
    if where:
        host, _, port = where.rpartition(":")
        start_http_server(
            int(port), addr=host.strip("[]") or "127.0.0.1", registry=exposition.registry
        )
        log.info("serving /metrics without authentication on %s", where)

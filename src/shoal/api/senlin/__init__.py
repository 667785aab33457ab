"""A Senlin v1-compatible API over Shoal's own model, mounted at `/clustering`.

It is its own small ASGI app so that everything under `/clustering` — unknown paths, bad
bodies, auth failures — answers in Senlin's error shape, and the microversion middleware sees
only these requests. Auth is the native API's (a bearer token or `X-Auth-Token`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from shoal.api.senlin import errors
from shoal.api.senlin.routes_clusters import router as cluster_router
from shoal.api.senlin.routes_policies import router as policy_router
from shoal.api.senlin.routes_profiles import router as profile_router
from shoal.api.senlin.routes_receivers import router as receiver_router
from shoal.api.senlin.routes_work import router as work_router
from shoal.api.senlin.versions import Microversions, v1_href, version_info
from shoal.runtime import Runtime

PREFIX = "/clustering"


def clustering_app(runtime: Runtime) -> FastAPI:
    """The façade over `runtime`; mount it at PREFIX."""
    app = FastAPI(
        title="Shoal clustering (Senlin v1)", openapi_url=None, docs_url=None, redoc_url=None
    )
    app.state.runtime = runtime
    errors.install(app)
    app.add_middleware(Microversions)

    @app.get("/")
    async def versions(request: Request) -> JSONResponse:
        return JSONResponse({"versions": [version_info(v1_href(request))]}, status_code=300)

    @app.get("/v1")
    @app.get("/v1/")
    async def version(request: Request) -> dict[str, Any]:
        return {"version": version_info(v1_href(request))}

    for router in (profile_router, policy_router, cluster_router, work_router, receiver_router):
        app.include_router(router)
    return app

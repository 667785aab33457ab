"""A Senlin v1-compatible API over Shoal's own model, mounted at `/clustering`.

It is its own small ASGI app so that everything under `/clustering` — unknown paths, bad
bodies, auth failures — answers in Senlin's error shape, and the microversion middleware sees
only these requests. Auth is the native API's (a bearer token or `X-Auth-Token`). It serves its
own OpenAPI document at `/clustering/openapi.json` (for the fuzzer; see `schema.py`).
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.routing import Mount

from shoal.api.senlin import errors
from shoal.api.senlin.routes_clusters import router as cluster_router
from shoal.api.senlin.routes_policies import router as policy_router
from shoal.api.senlin.routes_profiles import router as profile_router
from shoal.api.senlin.routes_receivers import router as receiver_router
from shoal.api.senlin.routes_work import router as work_router
from shoal.api.senlin.schema import ERRORS
from shoal.api.senlin.versions import Microversions, v1_href, version_info
from shoal.runtime import Runtime

PREFIX = "/clustering"


def mount(app: FastAPI, clustering: FastAPI) -> None:
    """Mount the façade at PREFIX so that every path under it reaches it: Starlette's mount
    pattern (`.*`) stops at a newline, and `/clustering/v1/clusters/%0A` would fall through to
    the native API's 404 (in the native error shape; the fuzzer found it)."""
    route = Mount(PREFIX, app=clustering)
    route.path_regex = re.compile(route.path_regex.pattern, re.DOTALL)
    app.router.routes.append(route)


def clustering_app(runtime: Runtime) -> FastAPI:
    """The façade over `runtime`; mount it at PREFIX."""
    app = FastAPI(
        title="Shoal clustering (Senlin v1)",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.state.runtime = runtime
    errors.install(app)
    app.add_middleware(Microversions)

    @app.get("/", status_code=300, responses={300: {"description": "The API versions"}})
    async def versions(request: Request) -> JSONResponse:
        return JSONResponse({"versions": [version_info(v1_href(request))]}, status_code=300)

    @app.get("/v1", responses=ERRORS)
    @app.get("/v1/", include_in_schema=False)
    async def version(request: Request) -> dict[str, Any]:
        return {"version": version_info(v1_href(request))}

    for router in (profile_router, policy_router, cluster_router, work_router, receiver_router):
        app.include_router(router, responses=ERRORS)
    return app

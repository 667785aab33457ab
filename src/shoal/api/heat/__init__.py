"""Heat's orchestration API (v1) over Shoal's clusters, mounted at `/orchestration`.

Its own small ASGI app, as the Senlin façade is, so everything under `/orchestration` answers
in Heat's error shape. Paths are Heat's: `/orchestration/v1/{project_id}/stacks...`; the
versions document is at `/orchestration/`. Auth is the native API's (Keystone tokens in
Keystone mode). The service layer (`service/heat`) translates; this package only routes.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.routing import Mount

from shoal.api.characters import unstorable_text
from shoal.api.heat import errors
from shoal.api.heat.routes_meta import router as meta_router
from shoal.api.heat.routes_resources import lookup as lookup_router
from shoal.api.heat.routes_resources import router as resource_router
from shoal.api.heat.routes_software import router as software_router
from shoal.api.heat.routes_stacks import router as stack_router
from shoal.runtime import Runtime
from shoal.service.heat.reading import Readings

PREFIX = "/orchestration"


def mount(app: FastAPI, orchestration: FastAPI) -> None:
    """Mount at PREFIX so every path under it reaches the façade (newlines included)."""
    route = Mount(PREFIX, app=orchestration)
    route.path_regex = re.compile(route.path_regex.pattern, re.DOTALL)
    app.router.routes.append(route)


def _versions(request: Request) -> dict[str, Any]:
    root = str(request.base_url).rstrip("/") + request.scope.get("root_path", "")
    return {
        "versions": [
            {
                "id": "v1.0",
                "status": "CURRENT",
                "links": [{"href": f"{root}/v1/", "rel": "self"}],
            }
        ]
    }


def orchestration_app(runtime: Runtime) -> FastAPI:
    """The façade over `runtime`; mount it at PREFIX."""
    app = FastAPI(
        title="Shoal orchestration (Heat v1)",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.state.runtime = runtime
    app.state.readings = Readings()
    errors.install(app)

    @app.middleware("http")
    async def storable(request: Request, call_next: Any) -> Any:
        """A NUL or lone surrogate in the path or query: Heat's 400 (the body: `body_of`)."""
        query = unquote(
            request.scope.get("query_string", b"").decode("latin-1"), errors="surrogatepass"
        )
        if unstorable_text(request.scope["path"]) or unstorable_text(query):
            return errors.heat_error(
                400, "The URL holds a character that cannot be stored", "HTTPBadRequest"
            )
        return await call_next(request)

    @app.get("/", status_code=300)
    async def versions(request: Request) -> JSONResponse:
        return JSONResponse(_versions(request), status_code=300)

    @app.get("/v1")
    @app.get("/v1/", include_in_schema=False)
    async def version(request: Request) -> dict[str, Any]:
        """The versioned root without a project, where keystoneauth looks for a version
        document when the catalog's URL ends in a project id."""
        return {"version": _versions(request)["versions"][0]}

    for router in (meta_router, software_router, stack_router, resource_router, lookup_router):
        app.include_router(router)
    return app

"""The web dashboard at /ui: pages people look at instead of tables they read.

It is a small static app (HTML, CSS, vanilla JavaScript shipped in `static/`, no build step, no
external requests) that calls the same /v1 JSON API with the same bearer token as every other
client, so it adds no second path to any logic. Two read-mostly helpers live here because no
/v1 route answers them in one request: the topology (hosts with capacity and the nodes on them,
`topology.py`) and a plan preview of a document that may not be a cluster yet (`plan.py`); and,
in Keystone mode, signing in with a user name and password (`login.py`).
"""

from __future__ import annotations

from fastapi import FastAPI

from shoal.api.ui.login import router as login_router
from shoal.api.ui.pages import router as pages_router
from shoal.api.ui.plan import router as plan_router
from shoal.api.ui.routes_topology import router as topology_router


def install(app: FastAPI) -> None:
    """Serve the dashboard from `app` (kept out of the OpenAPI schema)."""
    for router in (pages_router, login_router, topology_router, plan_router):
        app.include_router(router, include_in_schema=False)

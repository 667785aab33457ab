"""`GET /`: a small index of links, so a person or a client that starts at the root finds its way.

docs/api.md lists it among the requests that need no token; it names the APIs Shoal serves and
where their descriptions are, nothing about any tenant.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from shoal import __version__

router = APIRouter(tags=["meta"])


@router.get("/")
async def index() -> dict[str, Any]:
    return {
        "name": "shoal",
        "version": __version__,
        "links": {
            "v1": "/v1",
            "clusters": "/v1/clusters",
            "actions": "/v1/actions",
            "events": "/v1/events",
            "vclusters": "/v2/{tenant_id}/vclusters",
            "clustering": "/clustering/",
            "health": "/healthz",
            "openapi": "/openapi.json",
            "docs": "/docs",
        },
    }

"""Nodes a page at a time (issue 23): the API answers at most one page per request, so every
command that needs a cluster's (or every) node follows `next_marker` instead of asking for all,
and a listing can show each page as it arrives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from shoal.cli.client import ShoalClient

PAGE = 1000
"""The API's maximum page (shoal.api.pages.MAX_PAGE): fewest round trips."""


async def node_pages(client: ShoalClient, cluster: str | None) -> AsyncIterator[list[Any]]:
    """Each page of nodes (of one cluster), in list order, as it arrives."""
    marker: str | None = None
    while True:
        body = await client.get("/v1/nodes", cluster=cluster, limit=PAGE, marker=marker)
        yield list(body["nodes"])
        marker = body.get("next_marker")
        if not marker:
            return


async def all_nodes(client: ShoalClient, cluster: str | None = None) -> list[dict[str, Any]]:
    """Every node (of one cluster), page by page."""
    return [n async for page in node_pages(client, cluster) for n in page]

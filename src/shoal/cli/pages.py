"""Lists a page at a time (issue 23): the API answers at most one page per request, so every
command that needs every node, cluster or action follows `next_marker` instead of asking for
all, and a listing can show each page as it arrives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `shoal --help` imports this module and must not load httpx or asyncio
    from shoal.cli.client import ShoalClient

PAGE = 1000
"""The API's maximum page (shoal.api.pages.MAX_PAGE): fewest round trips."""


async def node_pages(client: ShoalClient, cluster: str | None) -> AsyncIterator[list[Any]]:
    """Each page of nodes (of one cluster), in list order, as it arrives."""
    async for page in pages(client, "/v1/nodes", "nodes", cluster=cluster):
        yield page


async def all_nodes(client: ShoalClient, cluster: str | None = None) -> list[dict[str, Any]]:
    """Every node (of one cluster), page by page."""
    return [n async for page in node_pages(client, cluster) for n in page]


async def pages(
    client: ShoalClient, path: str, key: str, **params: Any
) -> AsyncIterator[list[Any]]:
    """Each page of the list at `path` (its items under `key`), as it arrives."""
    marker: str | None = None
    while True:
        body = await client.get(path, **params, limit=PAGE, marker=marker)
        yield list(body[key])
        marker = body.get("next_marker")
        if not marker:
            return


async def every(client: ShoalClient, path: str, key: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of the list at `path`, page by page."""
    return [item async for page in pages(client, path, key, **params) for item in page]

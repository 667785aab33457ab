"""The one maximum page size of the native lists (issue 23): a request may ask for fewer
items, never for more, and a list asked without a size answers one default page, not
everything. A size over the maximum is a 400 that names the maximum before any query runs."""

from __future__ import annotations

from shoal.model.problems import Problem
from shoal.service.errors import ServiceError

MAX_PAGE = 1000
"""The largest page of any native list (nodes, clusters, actions, events, receivers,
deployments, a cluster view's embedded nodes)."""


# Routes declare these maxima in their OpenAPI schema (json_schema_extra) rather than as `le=`:
# a validation error is a 422, and a page over the maximum is a 400 naming it (issue 23).

MAX_EVENT_PAGE = 10_000
"""Events are small rows read by long polls and the dashboard's timeline: a larger page."""


def page_size(asked: int | None, field: str = "limit", maximum: int | None = None) -> int:
    """`asked` (None: the maximum) when it is within the maximum (MAX_PAGE unless given); else
    a 400 naming it."""
    most = MAX_PAGE if maximum is None else maximum
    if asked is None:
        return most
    if asked > most:
        raise ServiceError(
            f"a page holds at most {most} items",
            [Problem(f"query:{field}", f"at most {most} (the maximum page size)")],
        )
    return asked

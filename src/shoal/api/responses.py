"""Shaping answers: 202 with a Location for actions, plain JSON for the rest."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from shoal.service.clusters import Submitted
from shoal.service.views import action_view, cluster_view


def accepted(sub: Submitted, extra: dict[str, Any] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"cluster": cluster_view(sub.cluster), "action": action_view(sub.action)}
    body.update(extra or {})
    return JSONResponse(body, status_code=202, headers={"Location": f"/v1/actions/{sub.action.id}"})

"""Shaping answers: 202 with a Location for actions, plain JSON for the rest."""

from __future__ import annotations

from typing import Any

from fastapi import Response

from shoal.service.clusters import Submitted
from shoal.service.views import action_view, cluster_view


def accepted(sub: Submitted, response: Response) -> dict[str, Any]:
    """The body of a 202 (declared as `schemas.Accepted`); `Location` names the action."""
    response.headers["Location"] = f"/v1/actions/{sub.action.id}"
    return {"cluster": cluster_view(sub.cluster), "action": action_view(sub.action)}

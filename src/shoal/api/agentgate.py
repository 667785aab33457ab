"""The agents' own listener (issue 39): what a node may reach of Shoal, and nothing else.

`shoal server` listens twice: where people and clients talk to it, and on a port of its own for
the nodes' agents (`agent_port`; the `agent_url` they are given names it). A node in its own
network may reach only that port (providers/local/nodefilter.py), and on it only the agents'
routes answer: a server's metadata (GET) and a run's signal (POST/PUT). Anything else asked
there is 404, as if the API had no other route, so a node never reaches the admin routes, the
dashboard or the metrics, token or not.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from shoal.api.errors import error_response
from shoal.engine.software.urls import METADATA_PATH, SIGNAL_PATH


def _pattern(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(path)) + "$")


ALLOWED = (
    (frozenset({"GET", "HEAD"}), _pattern(METADATA_PATH)),
    (frozenset({"POST", "PUT"}), _pattern(SIGNAL_PATH)),
)


def allowed(method: str, path: str) -> bool:
    """Whether an agent's listener serves this request."""
    return any(method in methods and p.match(path) for methods, p in ALLOWED)


class AgentGate:
    """Refuses, on the agents' listener (the local `port` a request came in on), all but the
    agents' routes."""

    def __init__(self, app: ASGIApp, port: int) -> None:
        self.app = app
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server") if scope["type"] == "http" else None
        on_agents = server is not None and server[1] == self.port
        if on_agents and not allowed(scope["method"], scope["path"]):
            response = error_response(404, "not found (this port serves agents only)")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

"""A tiny launcher for tests: one Shoal server (API and engine) configured from SHOAL_* only.

    python tests/support/serve.py

opens `Runtime.open(Settings())` and serves `create_app(runtime, run_engine=True)` with
uvicorn on `127.0.0.1:$SHOAL_PORT`, and the agents' own listener on a free port. The
end-to-end tests start servers with this rather than `shoal server`, so they do not depend on
the CLI's details.
"""

from __future__ import annotations

import asyncio
import socket

import uvicorn

from shoal.api.app import create_app
from shoal.runtime import Runtime
from shoal.settings import Settings


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


async def main() -> None:
    settings = Settings()
    runtime = await Runtime.open(settings)
    api = _listen(settings.port)
    # Software deployments' agents reach this server on a listener of their own, where only
    # their routes answer (as `shoal server` does, issue 39), unless an agent URL is given.
    agents = None if settings.agent_url else _listen(settings.agent_port)
    agent_port = agents.getsockname()[1] if agents is not None else None
    runtime.engine.deployer.agent_url = settings.agent_url or f"http://127.0.0.1:{agent_port}"
    app = create_app(runtime, run_engine=True, agent_port=agent_port)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve(sockets=[api] if agents is None else [api, agents])
    finally:
        await runtime.close()


if __name__ == "__main__":
    asyncio.run(main())

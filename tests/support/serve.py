"""A tiny launcher for tests: one Shoal server (API and engine) configured from SHOAL_* only.

    python tests/support/serve.py

opens `Runtime.open(Settings())` and serves `create_app(runtime, run_engine=True)` with
uvicorn on `127.0.0.1:$SHOAL_PORT`. The end-to-end tests start servers with this rather than
`shoal server`, so they do not depend on the CLI's details.
"""

from __future__ import annotations

import asyncio

import uvicorn

from shoal.api.app import create_app
from shoal.runtime import Runtime
from shoal.settings import Settings


async def main() -> None:
    settings = Settings()
    runtime = await Runtime.open(settings)
    # Software deployments' agents reach this server where it listens (as `shoal server` does).
    runtime.engine.deployer.agent_url = settings.agent_url or f"http://127.0.0.1:{settings.port}"
    app = create_app(runtime, run_engine=True)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=settings.port, log_level="warning", lifespan="on"
    )
    try:
        await uvicorn.Server(config).serve()
    finally:
        await runtime.close()


if __name__ == "__main__":
    asyncio.run(main())

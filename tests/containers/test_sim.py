"""On `sim`, container deployments are simulated with the same statuses as any other."""

from __future__ import annotations

import asyncio

from shoal.model.software import DeployAction
from shoal.providers.sim.software import SimDeployments
from shoal.providers.software import DeploymentRun


async def _nap(_s: float) -> None:
    return None


def _run(hook: str, action: DeployAction) -> DeploymentRun:
    return DeploymentRun("web", "srv-1", "web", action, hook, {}, ("endpoint",))


def test_container_hooks_are_simulated_like_scripts() -> None:
    sim = SimDeployments(_nap)
    up = asyncio.run(sim.run(_run("docker-compose", DeployAction.CREATE)))
    assert up.status_code == 0 and "docker-compose up -d" in up.stdout
    assert up.outputs == {"endpoint": "web.endpoint@web"}
    down = asyncio.run(sim.run(_run("kubelet", DeployAction.DELETE)))
    assert down.status_code == 0 and "podman kube down" in down.stdout
    failing = SimDeployments(_nap, failure_rate=1.0)
    assert asyncio.run(failing.run(_run("kubelet", DeployAction.CREATE))).status_code == 1

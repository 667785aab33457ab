"""Simulated software deployments: they take a configurable time and fail at a given rate.

Container deployments (docker-compose, kubelet) are simulated the same way, with the same
statuses; their stdout says what a real node would have run.

So the engine's deployment path (ordering, outputs feeding inputs, retries, health) is testable
and measurable without agents. Outputs are made up from the names, so a test can see which
deployment's output reached which input.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from shoal.model.software import DeploymentSignal, Json
from shoal.providers.software import DeploymentRun

Sleep = Callable[[float], Awaitable[None]]


def simulated_output(deployment: str, output: str, node: str) -> str:
    return f"{deployment}.{output}@{node}"


class SimDeployments:
    """Runs each deployment as a wait of `seconds`, failing at `failure_rate` (seeded)."""

    def __init__(
        self, sleep: Sleep, *, seconds: float = 0.0, failure_rate: float = 0.0, seed: int = 0
    ) -> None:
        if not 0.0 <= failure_rate <= 1.0:
            raise ValueError("deploy_failure_rate must be between 0 and 1")
        self.seconds = seconds
        self.failure_rate = failure_rate
        self._sleep = sleep
        self._rng = random.Random(seed)
        self.runs: list[DeploymentRun] = []
        """Every run, in order (tests read it to see what ran where and with which inputs)."""
        self.outputs: dict[tuple[str, str], Json] = {}
        """(deployment, output) -> the value runs from now on report instead of the made-up
        one (a test changes an output this way, then makes the deployment run again)."""

    async def run(self, run: DeploymentRun) -> DeploymentSignal:
        self.runs.append(run)
        if self.seconds > 0:
            await self._sleep(self.seconds)
        if self.failure_rate and self._rng.random() < self.failure_rate:
            return DeploymentSignal(
                status_code=1,
                stdout="",
                stderr=f"simulated failure of {run.deployment} on {run.node}",
            )
        outputs: dict[str, Json] = {
            o: self.outputs.get((run.deployment, o), simulated_output(run.deployment, o, run.node))
            for o in run.outputs
        }
        return DeploymentSignal(status_code=0, stdout=_stdout(run), outputs=outputs)


_CONTAINER_WORDS = {
    # What the hooks do on a real node (docs/containers.md), said the same way when simulated.
    "docker-compose": ("docker-compose up -d (simulated)", "docker-compose kill (simulated)"),
    "kubelet": ("podman kube play (simulated)", "podman kube down (simulated)"),
}


def _stdout(run: DeploymentRun) -> str:
    """What a run prints: its action, deployment and node, and for a container hook what the
    node would have run."""
    said = f"{run.action} {run.deployment} on {run.node}"
    words = _CONTAINER_WORDS.get(run.hook)
    if words is None:
        return said
    return f"{said}: {words[1] if str(run.action) == 'DELETE' else words[0]}"

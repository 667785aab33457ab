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

from shoal.model.software import DeployAction, DeploymentSignal, Json
from shoal.providers.software import DeploymentRun, RetiredDeployment

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
        self.applied: dict[tuple[str, str], str] = {}
        """(server id, deployment) -> hook of what a completed CREATE or UPDATE left on a
        node, until its DELETE or its retirement: what a real node would still be running
        (tests compare it with the rows, issue 36's orphan check)."""

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
        if run.action is DeployAction.DELETE:
            self.applied.pop((run.provider_id or run.node, run.deployment), None)
        else:
            self.applied[(run.provider_id or run.node, run.deployment)] = run.hook
        outputs: dict[str, Json] = {
            o: self.outputs.get((run.deployment, o), simulated_output(run.deployment, o, run.node))
            for o in run.outputs
        }
        return DeploymentSignal(status_code=0, stdout=_stdout(run), outputs=outputs)

    async def retire(self, retired: RetiredDeployment) -> None:
        """The deployment is no longer declared on the node: what it left there goes."""
        self.applied.pop((retired.provider_id or retired.node, retired.deployment), None)

    def forget_server(self, server_id: str) -> None:
        """A server deleted: nothing of it runs any more."""
        for key in [k for k in self.applied if k[0] == server_id]:
            del self.applied[key]


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

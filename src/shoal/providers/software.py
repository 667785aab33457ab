"""Providers that run software deployments themselves instead of through in-guest agents.

On `local` and `openstack` a deployment is served to the node's agents and finishes when their
signal arrives at the API. A provider with no agents (the simulated cloud) offers a
`DeploymentRunner` instead, and the engine awaits its answer, which has the signal's shape, so
everything after the signal is the same code on every provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from shoal.model.software import DeployAction, DeploymentSignal, Json


@dataclass(frozen=True, slots=True)
class DeploymentRun:
    """One deployment on one node, as a provider without agents needs it."""

    node: str
    provider_id: str | None
    deployment: str
    action: DeployAction
    hook: str
    inputs: Mapping[str, Json]
    outputs: tuple[str, ...]


class DeploymentRunner(Protocol):
    async def run(self, run: DeploymentRun) -> DeploymentSignal: ...


@runtime_checkable
class RunsDeployments(Protocol):
    """A provider that runs deployments itself (`deployments` is None when it does not)."""

    @property
    def deployments(self) -> DeploymentRunner | None: ...


@dataclass(frozen=True, slots=True)
class RetiredDeployment:
    """A deployment taken off a node that stays (issue 36: the document no longer declares it
    there), as the provider needs it to remove what it left running."""

    node: str
    provider_id: str | None
    deployment: str
    hook: str
    config: str
    """The config body as it was last published (a Pod manifest names its pods)."""


@runtime_checkable
class RetiresDeployments(Protocol):
    """A provider (or its deployment runner) that removes what a deployment left on a node
    once the deployment is no longer declared there: its compose project's containers, its
    Pods. Called before the deployment's row goes, so what the engine starts next on that node
    (a replica binding the same port) finds them gone. Idempotent: nothing left is no error."""

    async def retire(self, retired: RetiredDeployment) -> None: ...


@runtime_checkable
class StartsAgents(Protocol):
    """A provider that can start the agents of a server already running (local): a server made
    before its cluster had software was created without a metadata URL. On a cloud the URL
    is in the server's user data, fixed at boot, so only recreating it helps there."""

    async def start_agents(self, server_id: str, metadata_url: str) -> bool:
        """Run the server's agents against `metadata_url`; False when they already do, or the
        server is not there to run them (missing, being built, its process down)."""
        ...

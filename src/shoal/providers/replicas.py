"""The part of a provider that runs workloads' replicas (issue 22): start one on a server,
ask whether it still runs, stop it. Optional, like `HostAdmin`: a provider without it whose
servers run Heat's agents (`openstack`) has its replicas carried by those agents
(engine/agent_replicas.py; `carried_by_agents` below says which path the keeper takes); one
with neither runs no replicas.

A replica is named by `key` (cluster id / replica name), so asking twice never starts two.
It is started from a `ReplicaTemplate`: what its containers run (image, command, args) and the
template's revision, so a rolling update (engine/workload_rollouts.py) can start the new
revision or the previous one again. A runtime that refuses a template (an image it cannot
pull) raises `PermanentError`.

A runtime that can also probe a replica (`ReplicaProber`: http GET, tcp connect or exec in a
container) gets the workload's liveness and readiness probes run by the keeper on the engine's
clock (engine/workload_probes.py); without it, a running replica reads ready. One that tells
of exits as they happen (`WatchesExits`) wakes the keeper then, rather than at its next tick.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

from shoal.model.workload_rollouts import ReplicaTemplate
from shoal.model.workloads import Probe
from shoal.providers.base import Provider
from shoal.providers.software import RunsDeployments

__all__ = [
    "ChoosesReplicaPath",
    "HasReplicaRuntime",
    "ReplicaProber",
    "ReplicaRuntime",
    "ReplicaState",
    "ReplicaTemplate",
    "WatchesExits",
    "carried_by_agents",
]


class ReplicaState(StrEnum):
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    """Its container ended (crashed or killed); the server it was on is still there."""
    LOST = "LOST"
    """Never started, stopped, or its server (or the server's host) is gone."""


@runtime_checkable
class ReplicaRuntime(Protocol):
    async def start_replica(self, key: str, server_id: str, template: ReplicaTemplate) -> None:
        """Start (or start again) the replica's containers from `template` on the server
        `server_id` (replacing what ran under `key`); raises `ResourceGone` when that server is
        not running, `PermanentError` when the runtime refuses the template."""

    async def replica_states(self, keys: list[str]) -> dict[str, ReplicaState]:
        """What each replica is doing now, in one call (10,000 replicas per tick)."""

    async def stop_replica(self, key: str) -> None:
        """Stop and forget it (already gone is fine)."""


@runtime_checkable
class ReplicaProber(Protocol):
    async def probe(self, key: str, server_id: str, container: str, probe: Probe) -> bool:
        """Run one probe of the replica's container once (at most `probe.timeout_s`): whether
        it passed. Never raises for a failing replica: a failure is False."""


@runtime_checkable
class WatchesExits(Protocol):
    """A runtime that tells of its containers' exits as they happen (`local`: its nodes'
    podman event logs), so the keeper restarts an exit at once rather than at its next look."""

    async def exited(self) -> None:
        """Return once a replica's container exited since the last return (at once when one
        did meanwhile); may wait without end. Cancelled by the caller when it stops waiting."""


@runtime_checkable
class HasReplicaRuntime(Protocol):
    """A provider with a replica runtime of its own (`local`, `sim`)."""

    @property
    def replicas(self) -> ReplicaRuntime: ...


@runtime_checkable
class ChoosesReplicaPath(Protocol):
    """A provider that can be told to carry its replicas through its nodes' agents instead
    (local's option `replicas = "agents"`; the simulation's, for tests of that path)."""

    @property
    def replicas_via_agents(self) -> bool: ...


def carried_by_agents(provider: Provider) -> bool:
    """Whether the keeper runs replicas through the agents: the provider asks for it, or it has
    no replica runtime and its deployments run on the nodes' agents (no simulated
    `deployments` runner): `openstack`."""
    if isinstance(provider, ChoosesReplicaPath) and provider.replicas_via_agents:
        return True
    if isinstance(provider, HasReplicaRuntime):
        return False
    runner = provider.deployments if isinstance(provider, RunsDeployments) else None
    return runner is None

"""What a provider can do beyond the `Provider` protocol, declared as Protocols (issue 40).

A provider states a capability by having the part that does it: a `networking` driver, a
`replicas` runtime, `node_logs`, an `images` store, a `confinement` report. The runtime reads
them once (`Capabilities.of`, in runtime.py) and the layers above use the typed values, so no
caller asks a provider for an attribute by name or checks which concrete class it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from shoal.providers.base import Provider
from shoal.providers.images import ImageImporter
from shoal.providers.networking import NetworkDriver
from shoal.providers.replicas import HasReplicaRuntime, ReplicaRuntime, carried_by_agents


@runtime_checkable
class NodeLogs(Protocol):
    def node_log(self, provider_id: str, max_bytes: int) -> str | None:
        """The end of a server's own log (blocking: run it in a thread); None when the
        provider made no such server or it has no log."""
        ...


@dataclass(frozen=True, slots=True)
class ConfinementReport:
    """How a provider that runs nodes on Shoal's own machine keeps them from it (issue 29,
    39): sandboxed (their files), isolated (their network), and why not when not."""

    sandboxed: bool
    isolated: bool
    reasons: tuple[str, ...] = ()

    @property
    def single_tenant(self) -> str | None:
        """Why such a Shoal may serve its admin only (a node could take the server), or None."""
        if self.sandboxed and self.isolated:
            return None
        return "; ".join(self.reasons) or "local nodes are not confined"


@runtime_checkable
class HasNetworkDriver(Protocol):
    @property
    def networking(self) -> NetworkDriver: ...


@runtime_checkable
class HasNodeLogs(Protocol):
    @property
    def node_logs(self) -> NodeLogs: ...


@runtime_checkable
class HasImageStore(Protocol):
    @property
    def images(self) -> ImageImporter: ...


@runtime_checkable
class ConfinesNodes(Protocol):
    @property
    def confinement(self) -> ConfinementReport: ...


def network_driver(provider: Provider) -> NetworkDriver | None:
    return provider.networking if isinstance(provider, HasNetworkDriver) else None


def replica_runtime(provider: Provider) -> ReplicaRuntime | None:
    """The provider's own replica runtime (None when it has none, or when its replicas go
    through the nodes' agents: `carried_by_agents`)."""
    if carried_by_agents(provider) or not isinstance(provider, HasReplicaRuntime):
        return None
    return provider.replicas


@dataclass(frozen=True, slots=True)
class Capabilities:
    """A provider's capabilities, read once when Shoal starts."""

    networking: NetworkDriver | None = None
    replicas: ReplicaRuntime | None = None
    replicas_via_agents: bool = False
    node_logs: NodeLogs | None = None
    images: ImageImporter | None = None
    confinement: ConfinementReport | None = None
    """None: the provider's nodes do not run on Shoal's machine (a cloud, the simulation)."""

    @classmethod
    def of(cls, provider: Provider) -> Capabilities:
        return cls(
            networking=network_driver(provider),
            replicas=replica_runtime(provider),
            replicas_via_agents=carried_by_agents(provider),
            node_logs=provider.node_logs if isinstance(provider, HasNodeLogs) else None,
            images=provider.images if isinstance(provider, HasImageStore) else None,
            confinement=provider.confinement if isinstance(provider, ConfinesNodes) else None,
        )

    @property
    def single_tenant(self) -> str | None:
        """Why this Shoal serves its admin only, or None when it may serve every project."""
        return None if self.confinement is None else self.confinement.single_tenant

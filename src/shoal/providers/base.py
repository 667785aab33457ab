"""The provider protocol: what the engine may ask of a backend.

Every create takes an idempotency `key` (Shoal's node id): asking twice with the same key never
makes a second resource; it returns the first. Deletes of a resource that is already gone
succeed. Calls are async so one engine can keep thousands in flight.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from shoal.model.enums import NodeKind
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile, VolumeProfile


class ResourceState(StrEnum):
    """What the backend reports about a resource right now."""

    BUILDING = "BUILDING"
    ACTIVE = "ACTIVE"
    STOPPED = "STOPPED"
    ERROR = "ERROR"
    MISSING = "MISSING"


@dataclass(frozen=True, slots=True)
class ServerRequest:
    key: str
    name: str
    cluster: str
    host: str
    zone: str
    profile: ServerProfile


@dataclass(frozen=True, slots=True)
class VolumeRequest:
    key: str
    name: str
    cluster: str
    host: str
    zone: str
    profile: VolumeProfile


@dataclass(frozen=True, slots=True)
class Resource:
    """A server or volume as the backend sees it."""

    id: str
    key: str
    kind: NodeKind
    name: str
    state: ResourceState
    host: str | None = None
    zone: str | None = None
    address: str | None = None
    """For servers that have one, "ip:port" or "ip"; None for volumes."""
    attached_to: str | None = None
    details: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Provider(Protocol):
    """A backend: local processes, a simulated cloud, or OpenStack."""

    name: str

    async def inventory(self) -> Inventory:
        """Hosts, zones and the flavor/image catalog this backend offers."""
        ...

    async def create_server(self, request: ServerRequest) -> Resource:
        """Create (or find, by `request.key`) a server and wait until it is ACTIVE."""
        ...

    async def create_volume(self, request: VolumeRequest) -> Resource:
        """Create (or find, by `request.key`) a volume."""
        ...

    async def attach_volume(self, volume_id: str, server_id: str) -> None:
        """Attach a volume to a server; attaching it again to the same server is a no-op."""
        ...

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        """Delete a resource and everything it made; succeeds if it is already gone."""
        ...

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        """The resource as it is now (state MISSING if it no longer exists)."""
        ...

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        """Every resource this backend holds for Shoal (for one cluster id when given)."""
        ...

    async def close(self) -> None:
        """Release clients and background tasks (never stops the resources themselves)."""
        ...

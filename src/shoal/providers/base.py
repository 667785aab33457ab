"""The provider protocol: what the engine may ask of a backend.

Every create takes an idempotency `key` (Shoal's node id): asking twice with the same key never
makes a second resource; it returns the first, and a server whose process or VM has died is
started again in place. Deletes of a resource that is already gone succeed. Calls are async so
one engine can keep thousands in flight.

What `get` and `list_resources` report, for every backend:

- ACTIVE: running (a server) or present (a volume).
- BUILDING: being created, rebooted or rebuilt right now.
- ERROR: the record is there but the server is not running (it crashed, or its host came back
  after a failure); `reboot`, `rebuild` or a create with its key starts it again in place.
- MISSING: not there: never existed or deleted, its host is down, or what made it is gone behind
  Shoal's back (a local server's workdir, a local volume's directory). `reboot` of a MISSING
  server raises `ResourceGone`; a create with its key (when its host is up) or a `rebuild`
  makes it again with the same id and address.

`list_resources` lists every resource the backend has a record of, whatever its state, so a
reconciler can compare them with what it expects.

`HostAdmin` is the optional part for backends whose hosts can be failed on purpose (the local
and sim providers): chaos drills, demos and tests of self-healing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from shoal.model.enums import NodeKind
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.providers.networking import ServerNetworking


class ResourceState(StrEnum):
    """What the backend reports about a resource right now."""

    BUILDING = "BUILDING"
    ACTIVE = "ACTIVE"
    STOPPED = "STOPPED"
    ERROR = "ERROR"
    MISSING = "MISSING"


@dataclass(frozen=True, slots=True)
class ServerGroupHint:
    """The host-level rule a server shares with its grouping's other servers, for backends that
    enforce rules themselves (OpenStack as a tenant: a Nova server group per grouping)."""

    grouping: str
    policy: str
    """"affinity", "anti-affinity", "soft-affinity" or "soft-anti-affinity"."""
    max_per_host: int | None = None
    """For anti-affinity: how many of the group's servers one host may hold (None: one)."""


@dataclass(frozen=True, slots=True)
class ServerRequest:
    key: str
    name: str
    cluster: str
    host: str
    zone: str
    profile: ServerProfile
    server_group: ServerGroupHint | None = None
    fresh: bool = False
    """No earlier attempt of this create can exist (the first try of a never-claimed action), so
    a backend whose search by key is costly may skip it. False is always safe."""
    metadata_url: str | None = None
    """Where the server's in-guest agents (Heat's os-collect-config `request` collector) poll
    for its software deployments, in Heat's metadata shape (model/heat_agent.py). None: the
    server runs no deployments, and no agents are started or configured."""
    ports: tuple[str, ...] = ()
    """Ids of ports made beforehand (the openstack provider's `ensure_port`) the server boots
    on, in order; empty: the backend's default network attachment (`profile.networks`)."""
    networking: ServerNetworking | None = None
    """The server's own ports and floating IPs of its cluster's document (issue 26): a backend
    with ports of its own makes them before the boot and boots on them; others ignore it."""


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

    async def reboot(self, server_id: str) -> Resource:
        """Restart a server in place (same id, key, address, disk and volumes), wait until it is
        ACTIVE. A server that is not running is simply started. `ResourceGone` if it does not
        exist or reads MISSING (its host is down, its disk is gone)."""
        ...

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        """Recreate a server in place from `profile`'s image and flavor: its disk is wiped,
        its id, key, name, address and attached volumes are kept; wait until it is ACTIVE.
        `ResourceGone` if it does not exist or its host is down; `PermanentError` for an
        image or flavor the backend does not have, or no room on its host for the new flavor."""
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


@runtime_checkable
class ChangeFeed(Protocol):
    """A provider that tells which clusters' resources changed (Nova's `changes-since`): the
    manager then looks only at those, and at each cluster's full listing rarely (issue 37)."""

    async def changes_since(self, cursor: int | None) -> tuple[int, frozenset[str] | None]:
        """The clusters (as `list_resources` groups them) whose resources were made, changed or
        removed after `cursor`, or whose host failed or came back, and the cursor now. None
        instead of the clusters when it cannot tell (no cursor yet, or one too old): then every
        cluster counts as changed."""
        ...


@dataclass(frozen=True, slots=True)
class HostState:
    """One host as a `HostAdmin` sees it: failed or not, and how many resources it holds."""

    name: str
    zone: str
    failed: bool
    resources: int
    """Servers and volumes on the host, whatever their state."""


@runtime_checkable
class HostAdmin(Protocol):
    """Optional: a backend whose hosts can be failed and recovered on purpose.

    A failed host leaves `inventory()` (so placement avoids it), refuses creates, and its
    resources read MISSING. Recovered, it is back in the inventory; its volumes read ACTIVE
    again and its servers ERROR (their processes died with the host) until started again.
    """

    async def fail_host(self, host: str) -> list[str]:
        """Lose a host: every server on it dies. Returns the ids of every resource on it
        (servers and volumes). Failing a failed host again is harmless. `PermanentError`
        for an unknown host."""
        ...

    async def recover_host(self, host: str) -> None:
        """Bring a failed host back (a no-op for a healthy one)."""
        ...

    async def hosts(self) -> list[HostState]:
        """Every host of the backend, failed ones included, in inventory order."""
        ...

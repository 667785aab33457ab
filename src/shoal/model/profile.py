"""Profiles: what a node is. A server (flavor, image, zone) or a volume (size, type).

A server profile holds the catalog entries its references resolved to, so its demand is known
without the inventory and every message can still use the flavor's own name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.model.enums import NodeKind
from shoal.model.inventory import Flavor, Image


@dataclass(frozen=True, slots=True)
class ServerProfile:
    """A compute server: a flavor and an image, resolved against the inventory's catalog."""

    flavor: Flavor
    image: Image
    zone: str | None = None
    metadata: dict[str, str] = field(default_factory=dict, hash=False, compare=True)
    networks: tuple[str, ...] = ()
    name: str | None = None
    security_groups: tuple[str, ...] = ()
    """Existing security groups (by name) of the server's ports on `networks` (Senlin's
    `os.nova.server` property; the openstack provider passes them to Nova)."""
    floating_networks: tuple[tuple[str, str], ...] = ()
    """(network, external network) pairs: every server of this profile gets its own floating
    IP from the external network on its port of that network of `networks` (Senlin's
    `floating_network`, issue 26): made after its boot, deleted with it, so it follows scale
    out and in. The openstack provider makes them; `local` and `sim` ignore them (logical)."""

    @property
    def kind(self) -> NodeKind:
        return NodeKind.SERVER


@dataclass(frozen=True, slots=True)
class VolumeProfile:
    """A block-storage volume of `size_gb` GiB."""

    size_gb: int
    volume_type: str = ""
    zone: str | None = None
    name: str | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.VOLUME


Profile = ServerProfile | VolumeProfile

"""The local provider's hosts and images, and the checks every call makes against them.

Hosts come from the inventory (zones and hosts numbered for addresses: addressing.py); a host
failed on purpose (hosts.py) leaves `inventory()` and refuses creates until it is recovered.
"""

from __future__ import annotations

from shoal.model.inventory import Image, Inventory
from shoal.providers.addressing import host_coordinates
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.local.hosts import FailedHosts
from shoal.providers.local.records import ServerRecord


class HostCatalog:
    def __init__(self, inventory: Inventory, failed: FailedHosts) -> None:
        self.full = inventory
        """Every host, failed ones included."""
        self.failed = failed
        self.coords = host_coordinates(inventory)
        """Host name -> (zone number, host number), for its servers' addresses."""

    def inventory(self) -> Inventory:
        """The hosts that are up, and the catalog."""
        failed = self.failed.current()
        hosts = tuple(h for h in self.full.hosts if h.name not in failed)
        return Inventory(hosts=hosts, flavors=self.full.flavors, images=self.full.images)

    def check_host(self, name: str) -> str:
        """The host's zone; PermanentError if the host is unknown or down."""
        host = self.full.host(name)
        if host is None:
            raise PermanentError(f"no valid host: {name} is not a host of this provider")
        if name in self.failed:
            raise PermanentError(f"no valid host: {name} is down")
        return host.zone

    def known_host(self, host: str) -> None:
        if self.full.host(host) is None:
            raise PermanentError(f"no host named {host}")

    def check_present(self, record: ServerRecord) -> None:
        """ResourceGone if the server's host is down or no longer one of this provider's."""
        if self.full.host(record.host) is None:
            raise ResourceGone(f"server {record.name} is on {record.host}, not a host here")
        if record.host in self.failed:
            raise ResourceGone(f"server {record.name} is on host {record.host}, which is down")

    def image(self, wanted: Image) -> Image:
        image = self.full.image(wanted.id) or self.full.image(wanted.name)
        if image is None:
            raise PermanentError(f"no image {wanted.name} ({wanted.id}) in the local catalog")
        return image

"""Addresses that show placement: zone and host coordinates taken from the inventory order.

Both built-in providers give a server the address `P.Z.H.N` (Z = zone index + 1, H = host
index within its zone + 1, N = a slot on that host), so where a node landed can be read off its
address. The coordinates come from the full inventory, failed hosts included, so they never
shift when a host goes down.
"""

from __future__ import annotations

from shoal.model.inventory import Inventory

FIRST_SLOT = 2
"""Slot 1 is left for the host itself, as a gateway would be."""
LAST_SLOT = 254


def host_coordinates(inventory: Inventory) -> dict[str, tuple[int, int]]:
    """Host name -> (zone number, host number within its zone), both counted from 1."""
    zones = {zone: i + 1 for i, zone in enumerate(inventory.zones)}
    seen: dict[str, int] = {}
    out: dict[str, tuple[int, int]] = {}
    for host in inventory.hosts:
        seen[host.zone] = seen.get(host.zone, 0) + 1
        out[host.name] = (zones[host.zone], seen[host.zone])
    return out


def fits_ipv4(zone: int, host: int, slot: int) -> bool:
    """Whether the three coordinates fit the last three octets of an IPv4 address."""
    return 0 < zone <= 255 and 0 < host <= 255 and FIRST_SLOT <= slot <= LAST_SLOT


def ipv4(first_octet: int, zone: int, host: int, slot: int) -> str:
    return f"{first_octet}.{zone}.{host}.{slot}"

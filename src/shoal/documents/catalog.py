"""Resolving a document's references against the inventory: flavors, images and zones.

Flavors and images resolve by id first, then by name, as in Nova. An unknown reference names
the reference, suggests the closest known one and lists what the inventory has.
"""

from __future__ import annotations

from shoal.documents.collect import ProblemList
from shoal.documents.names import listing, suggest
from shoal.model.inventory import Flavor, Image, Inventory


def flavor(ref: str, inventory: Inventory, path: str, out: ProblemList) -> Flavor | None:
    found = inventory.flavor(ref)
    if found is None:
        known = [f"{f.name} (id {f.id})" for f in inventory.flavors]
        hint = suggest(ref, [f.name for f in inventory.flavors] + [f.id for f in inventory.flavors])
        out.add(
            path,
            f"unknown flavor '{ref}': no flavor has this id or name{hint}; "
            f"known flavors: {listing(known)}",
        )
    return found


def image(ref: str, inventory: Inventory, path: str, out: ProblemList) -> Image | None:
    found = inventory.image(ref)
    if found is None:
        hint = suggest(ref, [i.name for i in inventory.images] + [i.id for i in inventory.images])
        out.add(
            path,
            f"unknown image '{ref}': no image has this id or name{hint}; "
            f"known images: {listing(i.name for i in inventory.images)}",
        )
    return found


def zone(name: str, inventory: Inventory, path: str, out: ProblemList) -> bool:
    """True when `name` is one of the inventory's zones; otherwise a problem and False."""
    zones = inventory.zones
    if name in zones:
        return True
    out.add(
        path,
        f"unknown zone '{name}'{suggest(name, zones)}; the inventory's zones are {listing(zones)}",
    )
    return False

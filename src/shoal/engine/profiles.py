"""Node profiles as stored on node rows and action inputs, and back to model profiles.

A node row keeps its profile as a small document (flavor and image by name), so a provider
call can be made from the row alone, after a restart, without the cluster's document.
"""

from __future__ import annotations

from typing import Any

from shoal.documents.export import profile_document
from shoal.model.inventory import Inventory
from shoal.model.profile import Profile, ServerProfile, VolumeProfile
from shoal.providers.errors import PermanentError


def profile_row(profile: Profile) -> dict[str, Any]:
    return profile_document(profile)


class _Parsed:
    """Profiles parsed against one inventory, by their row's items. Issue 23: every node of a
    create carries the same small profile row, parsed again per node (two catalog lookups and
    a dataclass) in a 100,000-node create; a row with a list or mapping in it (metadata,
    networks) is unhashable and parsed each time, as before."""

    LIMIT = 1024

    def __init__(self) -> None:
        self.inventory: Inventory | None = None
        self.found: dict[tuple[tuple[str, Any], ...], Profile] = {}


_parsed = _Parsed()


def profile_from_row(doc: dict[str, Any], inventory: Inventory) -> Profile:
    if _parsed.inventory is not inventory or len(_parsed.found) >= _Parsed.LIMIT:
        _parsed.inventory, _parsed.found = inventory, {}
    key = tuple(doc.items())
    try:
        found = _parsed.found.get(key)
    except TypeError:  # unhashable values
        return _profile_from_row(doc, inventory)
    if found is None:
        found = _parsed.found[key] = _profile_from_row(doc, inventory)
    return found


def _profile_from_row(doc: dict[str, Any], inventory: Inventory) -> Profile:
    zone = doc.get("zone")
    if doc.get("type") == "volume":
        return VolumeProfile(
            size_gb=int(doc["size"]), volume_type=str(doc.get("volume_type", "")), zone=zone
        )
    flavor = inventory.flavor(str(doc["flavor"]))
    image = inventory.image(str(doc["image"]))
    if flavor is None or image is None:
        missing = doc["flavor"] if flavor is None else doc["image"]
        raise PermanentError(f"{missing!r} is no longer in the provider's catalog")
    return ServerProfile(
        flavor=flavor,
        image=image,
        zone=zone,
        metadata=dict(doc.get("metadata") or {}),
        networks=tuple(doc.get("networks") or ()),
        security_groups=tuple(doc.get("security_groups") or ()),
        floating_networks=tuple(sorted(dict(doc.get("floating_networks") or {}).items())),
    )

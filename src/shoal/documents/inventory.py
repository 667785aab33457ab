"""The inventory format (docs/inventory-format.md): hosts with zones and capacity, plus the
flavor and image catalog, read with every problem reported at once.

Without `flavors` or `images` the classic m1.* flavors and cirros are used, so a small
inventory file only has to list its hosts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name, listing, suggest
from shoal.documents.tree import describe, is_mapping, quote
from shoal.model.catalogs import CLASSIC_FLAVORS, DEFAULT_IMAGES
from shoal.model.inventory import Flavor, Host, Image, Inventory

_Entry = TypeVar("_Entry", Flavor, Image)


def read_inventory(data: object, out: ProblemList) -> Inventory | None:
    if not is_mapping(data):
        out.add(
            "",
            "an inventory must be a mapping with hosts (and zones, flavors, images), "
            f"found {describe(data)}",
        )
        return None
    f = Fields(data, "", out)
    before = len(out)
    zones = _zones(f)
    hosts = _hosts(f, zones)
    flavors = _catalog(f, "flavors", "flavor", _flavor, CLASSIC_FLAVORS)
    images = _catalog(f, "images", "image", _image, DEFAULT_IMAGES)
    f.finish()
    if len(out) != before or hosts is None or flavors is None or images is None:
        return None
    return Inventory(hosts=tuple(hosts), flavors=tuple(flavors), images=tuple(images))


def _zones(f: Fields) -> list[str] | None:
    """The listed zones, or None when not given (any zone a host names is then fine)."""
    if not f.has("zones"):
        return None
    zones: list[str] = []
    for zone, where in f.names("zones", what="zone name") or []:
        if not is_name(zone):
            f.out.add(where, f"{quote(zone)} is not a valid zone name: {NAME_RULE}")
        elif zone in zones:
            f.out.add(where, f"zone {zone} is listed twice")
        else:
            zones.append(zone)
    return zones


def _hosts(f: Fields, zones: list[str] | None) -> list[Host] | None:
    present = f.has("hosts")
    before = len(f.out)
    entries = f.items("hosts", what="hosts")
    if len(f.out) != before:
        return None
    if not entries:
        why = "an inventory needs at least one host"
        if present:
            f.problem("hosts", why)
        else:
            f.problem("hosts", f"'hosts' is missing: {why}")
        return None
    hosts: list[Host] = []
    seen: dict[str, str] = {}
    for value, path in entries:
        host = _host(value, path, f.out, zones)
        if host is None:
            continue
        if host.name in seen:
            f.out.add(
                child(path, "name"),
                f"the host name '{host.name}' is already used by the host at {seen[host.name]}",
            )
            continue
        seen[host.name] = path
        hosts.append(host)
    return hosts if len(hosts) == len(entries) else None


def _host(value: object, path: str, out: ProblemList, zones: list[str] | None) -> Host | None:
    h = mapping(value, path, out, "a host")
    if h is None:
        return None
    before = len(out)
    name = h.name("name", required="name the host")
    zone = h.name("zone", required="give the host's zone")
    vcpus = h.integer("vcpus", minimum=0, required="give the host's vcpus")
    ram_mb = h.integer("ram_mb", minimum=0, required="give the host's RAM in MiB")
    disk_gb = h.integer("disk_gb", minimum=0, required="give the host's disk in GB")
    volume_gb = h.integer("volume_gb", minimum=0, default=0)
    labels = h.text_map("labels")
    h.finish()
    if zone is not None and zones is not None and zone not in zones:
        h.problem(
            "zone",
            f"zone '{zone}' is not one of the listed zones{suggest(zone, zones)}; "
            f"listed zones: {listing(zones)}",
        )
    if (
        len(out) != before
        or name is None
        or zone is None
        or vcpus is None
        or ram_mb is None
        or disk_gb is None
        or volume_gb is None
    ):
        return None
    return Host(name, zone, vcpus, ram_mb, disk_gb, volume_gb, labels or {})


def _catalog(
    f: Fields,
    key: str,
    what: str,
    read: Callable[[object, str, ProblemList], _Entry | None],
    default: Sequence[_Entry],
) -> list[_Entry] | None:
    """The catalog entries under `key`; the default catalog when the key is absent."""
    if not f.has(key):
        return list(default)
    before = len(f.out)
    entries = f.items(key, what=f"{what}s")
    if len(f.out) != before:
        return None
    if not entries:
        f.problem(key, f"give at least one {what}, or leave '{key}' out for the defaults")
        return None
    result: list[_Entry] = []
    ids: dict[str, str] = {}
    names: dict[str, str] = {}
    for value, path in entries:
        entry = read(value, path, f.out)
        if entry is None:
            continue
        for field, text, seen in (("id", entry.id, ids), ("name", entry.name, names)):
            if text in seen:
                f.out.add(
                    child(path, field),
                    f"{what} {field} '{text}' is already used by the {what} at {seen[text]}",
                )
            else:
                seen[text] = path
        result.append(entry)
    return result if len(f.out) == before else None


def _flavor(value: object, path: str, out: ProblemList) -> Flavor | None:
    f = mapping(value, path, out, "a flavor")
    if f is None:
        return None
    before = len(out)
    flavor_id = f.ref("id", required="give the flavor's id")
    name = f.text("name", required="name the flavor", empty_ok=False)
    vcpus = f.integer("vcpus", minimum=1, required="give the flavor's vcpus")
    ram_mb = f.integer("ram_mb", minimum=1, required="give the flavor's RAM in MiB")
    disk_gb = f.integer("disk_gb", minimum=0, required="give the flavor's root disk in GB")
    f.finish()
    if (
        len(out) != before
        or flavor_id is None
        or name is None
        or vcpus is None
        or ram_mb is None
        or disk_gb is None
    ):
        return None
    return Flavor(flavor_id, name, vcpus=vcpus, ram_mb=ram_mb, disk_gb=disk_gb)


def _image(value: object, path: str, out: ProblemList) -> Image | None:
    f = mapping(value, path, out, "an image")
    if f is None:
        return None
    before = len(out)
    image_id = f.ref("id")
    name = f.text("name", required="name the image", empty_ok=False)
    min_disk = f.integer("min_disk_gb", minimum=0, default=0)
    properties = f.text_map("properties")
    f.finish()
    if len(out) != before or name is None or min_disk is None:
        return None
    return Image(image_id or name, name, min_disk_gb=min_disk, properties=properties or {})

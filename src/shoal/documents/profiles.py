"""Reading server and volume profiles, whether named, inline, or in the vcluster's spec shape.

Both formats describe the same two profile types with different key names, so the readers take
the key names as a parameter. Named profiles are read once into a `ProfileTable`; a reference
to a profile that was itself broken resolves to None quietly, since its problems are already
reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents import catalog
from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name, unknown
from shoal.documents.tree import describe, is_mapping, quote
from shoal.model.inventory import Inventory
from shoal.model.profile import Profile, ServerProfile, VolumeProfile

SERVER_TYPES = ("server",)
VOLUME_TYPES = ("volume", "block-storage")


@dataclass(frozen=True, slots=True)
class Keys:
    """The field names one format uses for a profile's settings."""

    flavor: str = "flavor"
    image: str = "image"
    zone: str = "zone"
    size: str = "size"
    volume_type: str = "volume_type"
    metadata: str = "metadata"
    networks: str | None = "networks"
    security_groups: str | None = None
    floating_networks: str | None = None


NATIVE_KEYS = Keys(security_groups="security_groups", floating_networks="floating_networks")


def read_server(
    f: Fields, inventory: Inventory, keys: Keys = NATIVE_KEYS, name: str | None = None
) -> ServerProfile | None:
    """A server profile from fields already known to describe a server."""
    before = len(f.out)
    flavor_ref = f.ref(keys.flavor, required="a server needs a flavor (an id or a name)")
    image_ref = f.ref(keys.image, required="a server needs an image (an id or a name)")
    flavor = catalog.flavor(flavor_ref, inventory, f.at(keys.flavor), f.out) if flavor_ref else None
    image = catalog.image(image_ref, inventory, f.at(keys.image), f.out) if image_ref else None
    zone = read_zone(f, keys.zone, inventory)
    metadata = f.text_map(keys.metadata)
    networks: list[tuple[str, str]] | None = []
    if keys.networks is not None:
        networks = f.names(keys.networks, what="network name")
    groups: list[tuple[str, str]] | None = []
    if keys.security_groups is not None:
        groups = f.names(keys.security_groups, what="security group name")
    floating: dict[str, str] | None = {}
    if keys.floating_networks is not None:
        floating = f.text_map(keys.floating_networks)
        attached = {n for n, _ in networks or []}
        for net, external in (floating or {}).items():
            if net not in attached:
                f.out.add(
                    child(f.at(keys.floating_networks), net),
                    f"{quote(net)} is not one of the profile's networks: a floating IP is "
                    "given through the server's port on one of them",
                )
            elif not is_name(external):
                f.out.add(
                    child(f.at(keys.floating_networks), net),
                    f"{quote(external)} is not an external network's name",
                )
    if len(f.out) != before or flavor is None or image is None:
        return None
    return ServerProfile(
        flavor=flavor,
        image=image,
        zone=zone,
        metadata=metadata or {},
        networks=tuple(n for n, _ in networks or []),
        name=name,
        security_groups=tuple(g for g, _ in groups or []),
        floating_networks=tuple(sorted((floating or {}).items())),
    )


def read_volume(
    f: Fields, inventory: Inventory, keys: Keys = NATIVE_KEYS, name: str | None = None
) -> VolumeProfile | None:
    """A volume profile from fields already known to describe a volume."""
    before = len(f.out)
    size = f.integer(
        keys.size,
        minimum=1,
        required="a volume needs a size in GiB",
        noun="size",
        meaning="the volume size in GiB",
    )
    volume_type = f.text(keys.volume_type)
    zone = read_zone(f, keys.zone, inventory)
    if len(f.out) != before or size is None:
        return None
    return VolumeProfile(size_gb=size, volume_type=volume_type or "", zone=zone, name=name)


def read_zone(f: Fields, key: str, inventory: Inventory) -> str | None:
    """An optional zone that must be one of the inventory's zones."""
    zone = f.name(key)
    if zone is not None and not catalog.zone(zone, inventory, f.at(key), f.out):
        return None
    return zone


def read_profile(
    value: object, path: str, inventory: Inventory, out: ProblemList, name: str | None = None
) -> Profile | None:
    """A native profile mapping with its `type`: server or volume."""
    f = mapping(value, path, out, "a profile")
    if f is None:
        return None
    before = len(out)
    kind = f.text("type", required="say whether the profile is a server or a volume")
    profile: Profile | None = None
    if kind in SERVER_TYPES:
        profile = read_server(f, inventory, name=name)
    elif kind in VOLUME_TYPES:
        profile = read_volume(f, inventory, name=name)
    else:
        if kind is not None:
            f.problem("type", f"unknown profile type {quote(kind)}; choose server or volume")
        return None  # the other fields depend on the type: nothing more to say about them
    f.finish()
    return profile if len(out) == before else None


@dataclass(slots=True)
class ProfileTable:
    """The document's named profiles: the good ones, and the names of the broken ones."""

    good: dict[str, Profile] = field(default_factory=dict)
    broken: set[str] = field(default_factory=set)

    def read(self, value: object, path: str, inventory: Inventory, out: ProblemList) -> None:
        """Read the `profiles:` mapping (profile name -> profile)."""
        if value is None:
            return
        f = mapping(value, path, out, "profiles")
        if f is None:
            return
        for key, body in f.entries():
            if not is_name(key):
                f.problem(key, f"{quote(key)} is not a valid profile name: {NAME_RULE}")
                self.broken.add(key)
                continue
            profile = read_profile(body, f.at(key), inventory, out, name=key)
            if profile is None:
                self.broken.add(key)
            else:
                self.good[key] = profile

    def resolve(
        self, value: object, path: str, inventory: Inventory, out: ProblemList
    ) -> Profile | None:
        """A profile given by name (of a named profile) or inline (a mapping)."""
        if isinstance(value, str):
            if value in self.good:
                return self.good[value]
            if value not in self.broken:
                out.add(path, unknown("profile", value, sorted(self.good)))
            return None
        if is_mapping(value):
            return read_profile(value, path, inventory, out)
        out.add(path, f"expected a profile name or a profile mapping, found {describe(value)}")
        return None

"""What a provider offers: hosts with zones and capacity, and a flavor and image catalog."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar


@dataclass(frozen=True, slots=True)
class Flavor:
    """A server size, as in Nova: looked up by id or by name."""

    id: str
    name: str
    vcpus: int
    ram_mb: int
    disk_gb: int


@dataclass(frozen=True, slots=True)
class Image:
    """A bootable image; `min_disk_gb` is the smallest root disk it fits on."""

    id: str
    name: str
    min_disk_gb: int = 0
    properties: dict[str, str] = field(default_factory=dict, compare=True, hash=False)


@dataclass(frozen=True, slots=True)
class Host:
    """A hypervisor (and its local volume storage) in one zone."""

    name: str
    zone: str
    vcpus: int
    ram_mb: int
    disk_gb: int
    volume_gb: int
    labels: dict[str, str] = field(default_factory=dict, compare=True, hash=False)


@dataclass(frozen=True, slots=True)
class Inventory:
    """Hosts plus catalog. Lookups by id win over lookups by name, as in Nova."""

    hosts: tuple[Host, ...]
    flavors: tuple[Flavor, ...] = ()
    images: tuple[Image, ...] = ()
    _names: frozenset[str] | None = field(default=None, init=False, compare=False, repr=False)
    """`host_names()`, made on first use."""

    def host_names(self) -> frozenset[str]:
        """The hosts' names, made once per inventory: the manager asks, for every cluster it
        looks at, which nodes' hosts are gone (issue 37: a set of 25,000 names made per
        cluster was most of an idle tick over 10,000 clusters)."""
        names = self._names
        if names is None:
            names = frozenset(h.name for h in self.hosts)
            object.__setattr__(self, "_names", names)  # a cache on a frozen value
        return names

    @property
    def zones(self) -> tuple[str, ...]:
        """Zone names in first-seen order."""
        return tuple(dict.fromkeys(h.zone for h in self.hosts))

    def flavor(self, ref: str) -> Flavor | None:
        return _lookup(self.flavors, ref)

    def image(self, ref: str) -> Image | None:
        return _lookup(self.images, ref)

    def host(self, name: str) -> Host | None:
        for h in self.hosts:
            if h.name == name:
                return h
        return None


_Item = TypeVar("_Item", Flavor, Image)


def _lookup(items: tuple[_Item, ...], ref: str) -> _Item | None:
    for item in items:
        if item.id == ref:
            return item
    for item in items:
        if item.name == ref:
            return item
    return None

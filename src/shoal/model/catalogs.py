"""Built-in inventories: the default 2 zones x 3 hosts, and synthetic ones of any size.

The default is what `shoal plan` and the local provider use when no inventory is given. The
synthetic generator is deterministic for a seed and feeds tests and benchmarks.
"""

from __future__ import annotations

import random

from shoal.model.inventory import Flavor, Host, Image, Inventory

CLASSIC_FLAVORS: tuple[Flavor, ...] = (
    Flavor("1", "m1.tiny", vcpus=1, ram_mb=512, disk_gb=1),
    Flavor("2", "m1.small", vcpus=1, ram_mb=2048, disk_gb=20),
    Flavor("3", "m1.medium", vcpus=2, ram_mb=4096, disk_gb=40),
    Flavor("4", "m1.large", vcpus=4, ram_mb=8192, disk_gb=80),
    Flavor("5", "m1.xlarge", vcpus=8, ram_mb=16384, disk_gb=160),
)

CIRROS = Image("8a1f4e6c-0c8b-4b7e-9d3a-2f0c6e1d5a10", "cirros", min_disk_gb=1)

DEFAULT_IMAGES: tuple[Image, ...] = (CIRROS,)


def default_inventory() -> Inventory:
    """Two zones (az1, az2) of three hosts each, with the classic m1.* flavors and cirros."""
    hosts = tuple(
        Host(
            name=f"{zone}-host{i}",
            zone=zone,
            vcpus=16,
            ram_mb=32768,
            disk_gb=500,
            volume_gb=1000,
        )
        for zone in ("az1", "az2")
        for i in (1, 2, 3)
    )
    return Inventory(hosts=hosts, flavors=CLASSIC_FLAVORS, images=DEFAULT_IMAGES)


def synthetic_inventory(
    hosts: int,
    zones: int,
    *,
    seed: int = 0,
    host_sizes: tuple[tuple[int, int, int, int], ...] = (
        (32, 131072, 2000, 4000),
        (64, 262144, 4000, 8000),
    ),
    labels: dict[str, tuple[str, ...]] | None = None,
) -> Inventory:
    """`hosts` hosts dealt round-robin over `zones` zones (`az1`...), sizes drawn by `seed`.

    `host_sizes` holds (vcpus, ram_mb, disk_gb, volume_gb) shapes; `labels` maps a label key to
    the values drawn for it.
    """
    if hosts < 1 or zones < 1:
        raise ValueError("a synthetic inventory needs at least one host and one zone")
    rng = random.Random(seed)
    width = len(str(hosts))
    out: list[Host] = []
    for i in range(hosts):
        vcpus, ram, disk, vol = rng.choice(host_sizes)
        host_labels = {k: rng.choice(v) for k, v in (labels or {}).items()}
        out.append(
            Host(
                name=f"h{i + 1:0{width}d}",
                zone=f"az{i % zones + 1}",
                vcpus=vcpus,
                ram_mb=ram,
                disk_gb=disk,
                volume_gb=vol,
                labels=host_labels,
            )
        )
    return Inventory(hosts=tuple(out), flavors=CLASSIC_FLAVORS, images=DEFAULT_IMAGES)

"""What an OpenStack cloud offers Shoal's placement: zones, hosts and the flavor/image catalog.

As an admin Shoal sees the hypervisors: every enabled, up compute host in an available zone,
with its capacity times the allocation ratios (Nova's hypervisor API reports raw capacity; the
ratios live in each compute's configuration, so they are provider options). Hypervisor fields
are read at microversion 2.87, the last that reports them.

As a tenant it sees zones only. Each zone becomes `slots` virtual hosts named `<zone>.slotNN`,
so placement can still put members of an anti-affinity grouping on distinct "hosts" and members
of an affinity grouping on one; Nova's server groups turn that into real hosts. A slot's
capacity is the project's whole quota (or a large figure when unlimited): Nova enforces the
quota, Shoal's placement only has to choose zones.

Volumes are Cinder's to place: a host offers a practically unbounded volume capacity when the
cloud has a block-storage service, none when it has not (so placing a volume fails with a
reason rather than at create time).
"""

from __future__ import annotations

from shoal.model.inventory import Flavor, Host, Image
from shoal.providers.errors import PermanentError
from shoal.providers.openstack.rest import Json, Rest

HYPERVISOR_MICROVERSION = "2.87"
IMAGE_PROXY_MICROVERSION = "2.35"
VOLUME_GB_WITH_CINDER = 1_000_000
_UNLIMITED = {"vcpus": 4096, "ram_mb": 16 * 1024 * 1024, "disk_gb": 1_000_000}


async def flavors(compute: Rest) -> tuple[Flavor, ...]:
    body, _ = await compute.call("GET", "/flavors/detail?limit=1000", "list flavors")
    return tuple(
        Flavor(
            id=str(f["id"]),
            name=str(f["name"]),
            vcpus=int(f["vcpus"]),
            ram_mb=int(f["ram"]),
            disk_gb=int(f["disk"]),
        )
        for f in body.get("flavors", [])
    )


async def images(image: Rest, compute: Rest) -> tuple[Image, ...]:
    """Glance's images; through Nova's image proxy when the cloud lists no image service
    (an endpoint override for compute alone, as in tests)."""
    try:
        body, _ = await image.call("GET", "/images?limit=1000", "list images")
        min_disk = "min_disk"
    except PermanentError:
        body, _ = await compute.call(
            "GET", "/images/detail", "list images", microversion=IMAGE_PROXY_MICROVERSION
        )
        min_disk = "minDisk"  # the proxy's names and statuses differ from Glance's
    return tuple(
        Image(id=str(i["id"]), name=str(i.get("name") or i["id"]), min_disk_gb=_int(i, min_disk))
        for i in body.get("images", [])
        if str(i.get("status", "active")).lower() == "active"
    )


def _int(doc: Json, key: str) -> int:
    try:
        return int(doc.get(key) or 0)
    except (TypeError, ValueError):
        return 0


async def admin_hosts(
    compute: Rest, *, cpu_ratio: float, ram_ratio: float, volume_gb: int
) -> tuple[Host, ...]:
    """Every usable compute host, from the zones' host lists and the hypervisors' capacity."""
    zones, _ = await compute.call("GET", "/os-availability-zone/detail", "list zones")
    zone_of: dict[str, str] = {}
    for z in zones.get("availabilityZoneInfo", []):
        if not (z.get("zoneState") or {}).get("available"):
            continue
        for host, services in (z.get("hosts") or {}).items():
            svc = (services or {}).get("nova-compute")
            if svc and svc.get("available") and svc.get("active"):
                zone_of[str(host)] = str(z["zoneName"])
    hyps, _ = await compute.call(
        "GET",
        "/os-hypervisors/detail?limit=1000",
        "list hypervisors",
        microversion=HYPERVISOR_MICROVERSION,
    )
    hosts: dict[str, Host] = {}
    for h in hyps.get("hypervisors", []):
        name = str((h.get("service") or {}).get("host") or h.get("hypervisor_hostname"))
        if h.get("state") != "up" or h.get("status") != "enabled" or name not in zone_of:
            continue
        prior = hosts.get(name)
        vcpus = int(int(h.get("vcpus") or 0) * cpu_ratio)
        ram = int(int(h.get("memory_mb") or 0) * ram_ratio)
        disk = int(h.get("local_gb") or 0)
        if prior is not None:  # several nodes behind one compute service (e.g. Ironic)
            vcpus, ram, disk = vcpus + prior.vcpus, ram + prior.ram_mb, disk + prior.disk_gb
        hosts[name] = Host(name, zone_of[name], vcpus, ram, disk, volume_gb)
    return tuple(sorted(hosts.values(), key=lambda h: (h.zone, h.name)))


async def tenant_hosts(compute: Rest, *, slots: int, volume_gb: int) -> tuple[Host, ...]:
    """`slots` virtual hosts per available zone, each as large as the project's quota."""
    zones, _ = await compute.call("GET", "/os-availability-zone", "list zones")
    names = sorted(
        str(z["zoneName"])
        for z in zones.get("availabilityZoneInfo", [])
        if (z.get("zoneState") or {}).get("available")
    )
    limits, _ = await compute.call("GET", "/limits", "show limits")
    absolute = (limits.get("limits") or {}).get("absolute") or {}

    def quota(key: str, fallback: int) -> int:
        value = int(absolute.get(key, -1))
        return fallback if value < 0 else value

    vcpus = quota("maxTotalCores", _UNLIMITED["vcpus"])
    ram = quota("maxTotalRAMSize", _UNLIMITED["ram_mb"])
    return tuple(
        Host(
            f"{zone}.slot{n:02d}",
            zone,
            vcpus,
            ram,
            _UNLIMITED["disk_gb"],
            volume_gb,
            labels={"virtual": "true"},
        )
        for zone in names
        for n in range(1, slots + 1)
    )

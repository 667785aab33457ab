"""The `openstack` provider: Nova servers and Cinder volumes through openstacksdk.

Two placement modes. As an admin (`mode: admin`), Shoal's own placement has already chosen each
server's host, and the server is pinned there: `availability_zone: "<zone>:<host>"` (Nova's
forced host: its filters are skipped, its Placement claim is not) or, with `pin: host`,
microversion 2.74's `host`, which runs Nova's scheduler on that one host too. As a tenant
(`mode: tenant`), hosts are invisible: Shoal places at zone level (see `inventory.py`) and each
server's host-level grouping becomes a Nova server group (see `servergroups.py`), so Nova
enforces the rule. `mode: auto` picks admin when the hypervisor API answers.

Every server carries the tags `shoal`, `shoal-node:<node id>` and `shoal-cluster:<cluster id>`
(and the same as metadata), so a retried create finds the server it already made (a create the
engine marks `fresh`, its very first try, skips that search), and a listing finds every server
Shoal owns. Volumes carry the same as metadata. A server that went
to ERROR without ever reaching a host (no valid host) is deleted and made again by a retried
create; one that died on its host is rebooted in place.

Nova's answers become Shoal's states and errors: BUILD and other transitions read BUILDING,
SHUTOFF and kin STOPPED, a server on a compute whose service is down MISSING; "No valid host"
is a `PermanentError` (the host Shoal chose is full or gone), quota a `PermanentError`, a
timeout or a 5xx a `TemporaryError`, always with Nova's fault message kept.

A server whose cluster declares ports for it (`ServerRequest.networking`, issue 26) boots on
them: the cluster's networks and groups are made if missing (`OpenStackNetworks.prepare`), then
the server's ports (keyed `port:<node>:<network>`, tagged `shoal-node:<node>`) and its floating
IPs (`fip:<name>:<node>`), all found again by a retried create, then the server with
`networks: [{port: id}]`. The server is marked (`shoal_ports` metadata) so its delete removes
them after it, and a create that fails for good removes them too.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from shoal.model.enums import NodeKind
from shoal.model.heat_agent import CollectorSettings
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import (
    Resource,
    ResourceState,
    ServerRequest,
    VolumeRequest,
)
from shoal.providers.errors import PermanentError, ProviderError, ResourceGone, TemporaryError
from shoal.providers.networking import ServerNetworking
from shoal.providers.openstack import inventory as discovery
from shoal.providers.openstack.netdriver import OpenStackNetworks, port_name
from shoal.providers.openstack.netspec import (
    FloatingIp,
    FloatingIpRequest,
    LoadBalancer,
    LoadBalancerRequest,
    Member,
    NetResource,
    NetworkResources,
    NetworksRequest,
    Port,
    PortRequest,
)
from shoal.providers.openstack.neutron import Neutron
from shoal.providers.openstack.octavia import Octavia
from shoal.providers.openstack.rest import Json, Rest
from shoal.providers.openstack.servergroups import ServerGroups
from shoal.providers.openstack.userdata import agent_user_data
from shoal.providers.openstack.watch import TAG, ServerWatch, Sleep, list_servers

COMPUTE_MICROVERSION = "2.74"
"""Tags at boot (2.52), "networks": "none" (2.37), max_server_per_host (2.64), host (2.74)."""
VOLUME_MICROVERSION = "3.0"
MODES = ("auto", "admin", "tenant")
PINS = ("force", "host")

_SERVER_STATES = {
    "ACTIVE": ResourceState.ACTIVE,
    "ERROR": ResourceState.ERROR,
    "UNKNOWN": ResourceState.ERROR,
    "SHUTOFF": ResourceState.STOPPED,
    "STOPPED": ResourceState.STOPPED,
    "SUSPENDED": ResourceState.STOPPED,
    "PAUSED": ResourceState.STOPPED,
    "SHELVED": ResourceState.STOPPED,
    "SHELVED_OFFLOADED": ResourceState.STOPPED,
    "DELETED": ResourceState.MISSING,
    "SOFT_DELETED": ResourceState.MISSING,
}
_VOLUME_STATES = {
    "available": ResourceState.ACTIVE,
    "in-use": ResourceState.ACTIVE,
    "error": ResourceState.ERROR,
    "error_deleting": ResourceState.ERROR,
    "error_extending": ResourceState.ERROR,
    "deleted": ResourceState.MISSING,
}
PORTS_MARK = "shoal_ports"
"""Server metadata: the server boots on ports Shoal made for its node (deleted after it)."""
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")


def node_tag(key: str) -> str:
    return f"shoal-node:{key}"


def cluster_tag(cluster: str) -> str:
    return f"shoal-cluster:{cluster}"


def _fault(server: Json) -> str:
    return str((server.get("fault") or {}).get("message") or "")


def _address(server: Json) -> str | None:
    """The server's own address: a fixed one (IPv4 first), never a floating IP Nova lists
    beside it, which is the router's NAT address, not the server's (pools and rules use it)."""
    found: list[tuple[bool, bool, str]] = []
    for addrs in (server.get("addresses") or {}).values():
        for a in addrs or []:
            if a.get("addr"):
                floating = a.get("OS-EXT-IPS:type") == "floating"
                found.append((floating, a.get("version") != 4, str(a["addr"])))
    return min(found)[2] if found else None


def server_resource(server: Json) -> Resource:
    status = str(server.get("status", "UNKNOWN"))
    state = _SERVER_STATES.get(status, ResourceState.BUILDING)
    if server.get("host_status") == "DOWN" and state is not ResourceState.MISSING:
        state = ResourceState.MISSING
    metadata = server.get("metadata") or {}
    details = {"status": status}
    if fault := _fault(server):
        details["fault"] = fault
    if server.get("host_status"):
        details["host_status"] = str(server["host_status"])
    return Resource(
        id=str(server["id"]),
        key=str(metadata.get("shoal_node", "")),
        kind=NodeKind.SERVER,
        name=str(server.get("name", "")),
        state=state,
        host=server.get("OS-EXT-SRV-ATTR:host"),
        zone=server.get("OS-EXT-AZ:availability_zone"),
        address=_address(server),
        details=details,
    )


def volume_resource(volume: Json) -> Resource:
    status = str(volume.get("status", "unknown"))
    attachments = volume.get("attachments") or []
    metadata = volume.get("metadata") or {}
    return Resource(
        id=str(volume["id"]),
        key=str(metadata.get("shoal_node", "")),
        kind=NodeKind.VOLUME,
        name=str(volume.get("name") or ""),
        state=_VOLUME_STATES.get(status, ResourceState.BUILDING),
        zone=volume.get("availability_zone"),
        attached_to=str(attachments[0]["server_id"]) if attachments else None,
        details={"status": status},
    )


class OpenStackProvider:
    """Servers in Nova and volumes in Cinder, for one project of one cloud."""

    name = "openstack"

    def __init__(
        self,
        connection: Callable[[], Any],
        *,
        mode: str = "auto",
        pin: str = "force",
        network: str = "auto",
        poll_interval_s: float = 1.0,
        boot_timeout_s: float = 600.0,
        request_timeout_s: float = 60.0,
        concurrency: int = 16,
        slots_per_zone: int = 32,
        cpu_allocation_ratio: float = 1.0,
        ram_allocation_ratio: float = 1.0,
        agent_poll_s: float = 30.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"openstack option mode: {mode!r} is not one of {', '.join(MODES)}")
        if pin not in PINS:
            raise ValueError(f"openstack option pin: {pin!r} is not one of {', '.join(PINS)}")
        self._connection_factory = connection
        self.agent_poll_s = agent_poll_s
        """The most the agents of a server created with a metadata URL wait between polls."""
        self._connection: Any = None
        self._executor = ThreadPoolExecutor(max(1, concurrency), "shoal-openstack")
        self.compute = Rest(
            lambda: self._conn().compute,
            self._executor,
            microversion=COMPUTE_MICROVERSION,
            timeout_s=request_timeout_s,
        )
        self.block_storage = Rest(
            lambda: self._conn().block_storage,
            self._executor,
            microversion=VOLUME_MICROVERSION,
            timeout_s=request_timeout_s,
        )
        self.image = Rest(lambda: self._conn().image, self._executor, timeout_s=request_timeout_s)
        self.network_api = Rest(
            lambda: self._conn().network, self._executor, timeout_s=request_timeout_s
        )
        self.load_balancer_api = Rest(
            lambda: self._conn().load_balancer, self._executor, timeout_s=request_timeout_s
        )
        self.neutron = Neutron(self.network_api)
        self.octavia = Octavia(
            self.load_balancer_api,
            poll_interval_s=poll_interval_s,
            timeout_s=boot_timeout_s,
            sleep=sleep,
        )
        self._has_octavia: bool | None = None
        self.networking = OpenStackNetworks(self.neutron, self.octavia)
        """The cluster networking the engine drives (engine/networks.py; netdriver.py)."""
        self._mode = None if mode == "auto" else mode
        self.pin = pin
        self.network = network
        self.poll_interval_s = poll_interval_s
        self.boot_timeout_s = boot_timeout_s
        self.slots_per_zone = slots_per_zone
        self.cpu_ratio = cpu_allocation_ratio
        self.ram_ratio = ram_allocation_ratio
        self._sleep = sleep
        self._watch = ServerWatch(self.compute, poll_interval_s, sleep)
        self._groups = ServerGroups(self.compute)
        self._has_volumes: bool | None = None
        self._volume_zones: set[str] | None = None
        self._networks: dict[str, str] = {}

    def _conn(self) -> Any:
        # Made on first use, in a worker thread: openstacksdk may read files and authenticate.
        if self._connection is None:
            self._connection = self._connection_factory()
        return self._connection

    # -- discovery ---------------------------------------------------------------------------

    async def mode(self) -> str:
        """ "admin" when the hypervisor API answers Shoal's credentials, else "tenant"."""
        if self._mode is None:
            try:
                await self.compute.call("GET", "/os-hypervisors?limit=1", "list hypervisors")
                self._mode = "admin"
            except PermanentError:
                self._mode = "tenant"
        return self._mode

    async def volumes_available(self) -> bool:
        if self._has_volumes is None:
            try:
                await self.block_storage.call("GET", "/volumes?limit=1", "list volumes")
                self._has_volumes = True
            except PermanentError:
                self._has_volumes = False
        return self._has_volumes

    async def inventory(self) -> Inventory:
        volume_gb = discovery.VOLUME_GB_WITH_CINDER if await self.volumes_available() else 0
        if await self.mode() == "admin":
            hosts = await discovery.admin_hosts(
                self.compute,
                cpu_ratio=self.cpu_ratio,
                ram_ratio=self.ram_ratio,
                volume_gb=volume_gb,
            )
        else:
            hosts = await discovery.tenant_hosts(
                self.compute, slots=self.slots_per_zone, volume_gb=volume_gb
            )
        flavors = await discovery.flavors(self.compute)
        images = await discovery.images(self.image, self.compute)
        return Inventory(hosts=hosts, flavors=flavors, images=images)

    # -- servers -----------------------------------------------------------------------------

    async def _find_server(self, key: str) -> Json | None:
        """The live server an earlier attempt made for node `key`, if any."""
        found = await list_servers(self.compute, f"tags={quote(node_tag(key))}", "find server")
        live = [s for s in found if s.get("status") not in ("DELETED", "SOFT_DELETED")]
        return live[0] if live else None

    async def _network_refs(self, profile: ServerProfile) -> str | list[Json]:
        if not profile.networks:
            if self.network in ("auto", "none"):
                return self.network
            return [{"uuid": self.network}]
        refs: list[Json] = []
        for net in profile.networks:
            if _UUID.match(net):
                refs.append({"uuid": net})
                continue
            if net not in self._networks:
                found, _ = await self.network_api.call(
                    "GET", f"/networks?name={quote(net)}", f"find network {net}"
                )
                nets = found.get("networks", [])
                if not nets:
                    raise PermanentError(f"no network named {net!r}")
                self._networks[net] = str(nets[0]["id"])
            refs.append({"uuid": self._networks[net]})
        return refs

    async def _boot(self, request: ServerRequest) -> str:
        p = request.profile
        name = p.name or request.name
        networks: str | list[Json]
        if request.ports:
            networks = [{"port": port} for port in request.ports]
        else:
            networks = await self._network_refs(p)
        server: Json = {
            "name": name,
            "imageRef": p.image.id,
            "flavorRef": p.flavor.id,
            "networks": networks,
            "metadata": {
                **p.metadata,
                "shoal_node": request.key,
                "shoal_cluster": request.cluster,
            },
            "tags": [TAG, node_tag(request.key), cluster_tag(request.cluster)],
        }
        if request.networking is not None:
            server["metadata"][PORTS_MARK] = "1"
        elif p.security_groups:
            # Nova puts the ports it makes on the profile's networks in these groups (ports
            # Shoal made carry the document's own groups instead).
            server["security_groups"] = [{"name": g} for g in p.security_groups]
        if p.floating_networks:
            server["metadata"][PORTS_MARK] = "1"  # its floating IPs are deleted after it
        if request.metadata_url is not None:
            # An image with Heat's agents finds Shoal from this alone (userdata.py).
            settings = CollectorSettings(request.metadata_url, polling_interval=self.agent_poll_s)
            try:
                server["user_data"] = agent_user_data(settings)
            except ValueError as e:
                raise PermanentError(f"server {name}: {e}") from e
        body: Json = {"server": server}
        group_id: str | None = None
        if await self.mode() == "admin":
            if self.pin == "force":
                server["availability_zone"] = f"{request.zone}:{request.host}"
            else:
                server["availability_zone"] = request.zone
                server["host"] = request.host
        else:
            server["availability_zone"] = request.zone
            if request.server_group is not None:
                async with self._groups.lock(request.cluster):
                    group_id = await self._groups.ensure(request.cluster, request.server_group)
                body["os:scheduler_hints"] = {"group": group_id}
                server["metadata"]["shoal_server_group"] = group_id
        try:
            made, _ = await self.compute.call(
                "POST", "/servers", f"create server {name}", body=body
            )
        except PermanentError as e:
            if group_id is not None and group_id in (e.fault or ""):
                # Its group was deleted with its last member meanwhile: make it again.
                self._groups.forget(group_id)
                raise TemporaryError(f"server group of {name} was just deleted") from e
            raise
        server_id = str(made["server"]["id"])
        return server_id

    async def _settle(self, server_id: str, what: str) -> Resource:
        """Wait for the server to leave its transition; ACTIVE, or an error with Nova's fault."""

        def settled(s: Json | None) -> bool:
            return s is None or s.get("status") in ("ACTIVE", "ERROR", "SHUTOFF")

        server = await self._watch.wait(server_id, what, settled, self.boot_timeout_s)
        if server is None:
            raise ResourceGone(f"{what} disappeared")
        if server["status"] == "ACTIVE":
            return server_resource(server)
        fault = _fault(server) or None
        if server["status"] == "SHUTOFF":
            raise TemporaryError(f"{what} stopped instead of starting", fault=fault)
        if fault and "no valid host" in fault.lower():
            raise PermanentError(f"Nova found no valid host for {what}", fault=fault)
        raise TemporaryError(f"{what} went to ERROR", fault=fault)

    async def create_server(self, request: ServerRequest) -> Resource:
        what = f"server {request.profile.name or request.name}"
        existing = None if request.fresh else await self._find_server(request.key)
        if existing is not None:
            server_id = str(existing["id"])
            status = existing.get("status")
            if status == "ACTIVE":
                await self._floating_ips(request, server_id)
                return server_resource(existing)
            if status == "ERROR" and not existing.get("OS-EXT-SRV-ATTR:host"):
                # It never reached a host; nothing of it is worth keeping.
                await self._delete_server(server_id, what)
            elif status in ("ERROR", "SHUTOFF"):
                return await self.reboot(server_id)
            else:
                return await self._settle(server_id, what)
        try:
            if request.networking is not None:
                request = dataclasses.replace(
                    request, ports=await self._server_ports(request, request.networking)
                )
            server_id = await self._boot(request)
        except PermanentError:
            if request.networking is not None:
                await self.neutron.delete_node(request.key)
            raise
        try:
            made = await self._settle(server_id, what)
        except PermanentError:
            # A server Nova could not place is of no use; leave nothing behind.
            await self._delete_server(server_id, what)
            raise
        await self._floating_ips(request, server_id)
        return made

    async def _floating_ips(self, request: ServerRequest, server_id: str) -> None:
        """The profile's `floating_networks` (Senlin's `floating_network`, issue 26): a
        floating IP of the server's own, from the external network, on the port Nova made on
        that network; keyed by node and network, so a retried create finds it, and tagged
        with the node, so the server's delete removes it (`PORTS_MARK`). A failure is
        temporary (the create is retried; the server is found, the IP made then)."""
        what = f"server {request.profile.name or request.name}"
        for net, external in request.profile.floating_networks:
            refs = await self._network_refs(dataclasses.replace(request.profile, networks=(net,)))
            assert isinstance(refs, list)  # a profile with networks names them
            ref = refs[0]
            found, _ = await self.network_api.call(
                "GET",
                f"/ports?device_id={quote(server_id)}&network_id={quote(str(ref['uuid']))}",
                f"find the port of {what} on {net}",
            )
            ports = found.get("ports") or []
            if not ports:
                raise TemporaryError(f"{what} has no port on network {net} yet")
            await self.neutron.ensure_floating_ip(
                FloatingIpRequest(
                    key=f"fip:{net}:{request.key}",
                    cluster=request.cluster,
                    external_network=external,
                    port_id=str(ports[0]["id"]),
                    node=request.key,
                )
            )

    async def _server_ports(self, request: ServerRequest, net: ServerNetworking) -> tuple[str, ...]:
        """The server's ports and floating IPs, made before it boots (found when made before)."""
        # The engine prepared the cluster's networks already, under its lease across engines
        # (engine/netlease.py), so this finds them prepared; it makes them only when that failed.
        await self.networking.prepare(net.cluster)
        ports: list[Port] = []
        for spec in net.ports:
            label = spec.name or spec.network
            ports.append(
                await self.neutron.ensure_port(
                    PortRequest(
                        key=f"port:{request.key}:{label}",
                        cluster=request.cluster,
                        name=port_name(net.node, label),
                        network=spec.network,
                        fixed_ip=str(spec.fixed_ip) if spec.fixed_ip is not None else None,
                        security_groups=spec.security_groups,
                        node=request.key,
                    )
                )
            )
        for fip in net.floating_ips:
            on = next(
                (
                    p
                    for p, spec in zip(ports, net.ports, strict=True)
                    if fip.network in (None, spec.network)
                ),
                ports[0],
            )
            await self.neutron.ensure_floating_ip(
                FloatingIpRequest(
                    key=f"fip:{fip.name}:{request.key}",
                    cluster=request.cluster,
                    external_network=fip.external_network,
                    port_id=on.id,
                    node=request.key,
                    address=str(fip.address) if fip.address is not None else None,
                )
            )
        return tuple(p.id for p in ports)

    async def _get_server(self, server_id: str) -> Json | None:
        return await self._watch.get(server_id, f"server {server_id}")

    async def _alive(self, server_id: str) -> bool:
        return await self._get_server(server_id) is not None

    async def _live_server(self, server_id: str) -> Json:
        server = await self._get_server(server_id)
        if server is None:
            raise ResourceGone(f"server {server_id} does not exist")
        if server.get("host_status") == "DOWN":
            raise ResourceGone(
                f"server {server.get('name')} is on host "
                f"{server.get('OS-EXT-SRV-ATTR:host')}, whose compute service is down"
            )
        return server

    async def reboot(self, server_id: str) -> Resource:
        server = await self._live_server(server_id)
        what = f"server {server.get('name')}"
        if server.get("status") == "SHUTOFF":
            action: Json = {"os-start": None}
        else:
            action = {"reboot": {"type": "HARD"}}
        await self.compute.call(
            "POST", f"/servers/{server_id}/action", f"restart {what}", body=action
        )
        return await self._settle(server_id, what)

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        server = await self._live_server(server_id)
        what = f"server {server.get('name')}"
        flavor = (server.get("flavor") or {}).get("original_name")
        if flavor is not None and flavor != profile.flavor.name:
            raise PermanentError(
                f"{what} has flavor {flavor}; rebuilding it as {profile.flavor.name} needs a "
                "resize, which this provider does not do: replace the node instead"
            )
        await self.compute.call(
            "POST",
            f"/servers/{server_id}/action",
            f"rebuild {what}",
            body={"rebuild": {"imageRef": profile.image.id}},
        )
        return await self._settle(server_id, what)

    async def _delete_server(self, server_id: str, what: str) -> None:
        server = await self._get_server(server_id)
        if server is None:
            return
        group = (server.get("metadata") or {}).get("shoal_server_group")
        await self.compute.call(
            "DELETE", f"/servers/{server_id}", f"delete {what}", missing_ok=True
        )
        await self._watch.wait(server_id, what, lambda s: s is None, self.boot_timeout_s)
        node = (server.get("metadata") or {}).get("shoal_node")
        if (server.get("metadata") or {}).get(PORTS_MARK) and node:
            # Its ports go after it (Neutron refuses to delete a port still bound to a server).
            await self.neutron.delete_node(str(node))
        if group:
            cluster = str((server.get("metadata") or {}).get("shoal_cluster", ""))
            async with self._groups.lock(cluster):
                await self._groups.release(str(group), self._alive)

    # -- volumes -----------------------------------------------------------------------------

    async def _find_volume(self, key: str) -> Json | None:
        query = quote(json.dumps({"shoal_node": key}))
        found, _ = await self.block_storage.call(
            "GET", f"/volumes/detail?metadata={query}", "find volume"
        )
        for v in found.get("volumes", []):
            if (v.get("metadata") or {}).get("shoal_node") == key and v.get("status") != "deleting":
                return dict(v)
        return None

    async def _get_volume(self, volume_id: str) -> Json | None:
        body, _ = await self.block_storage.call(
            "GET", f"/volumes/{volume_id}", f"show volume {volume_id}", missing_ok=True
        )
        volume = body.get("volume")
        return dict(volume) if volume is not None else None

    async def _wait_volume(
        self, volume_id: str, what: str, done: Callable[[Json | None], bool]
    ) -> Json | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.boot_timeout_s
        while True:
            volume = await self._get_volume(volume_id)
            if done(volume):
                return volume
            if volume is not None and str(volume.get("status", "")).startswith("error"):
                raise TemporaryError(f"{what} went to {volume['status']}")
            if loop.time() >= deadline:
                status = volume.get("status") if volume else "missing"
                raise TemporaryError(f"{what} is still {status} after {self.boot_timeout_s:g} s")
            await self._sleep(self.poll_interval_s)

    async def _cinder_zone(self, zone: str) -> str | None:
        """`zone` if Cinder has a zone of that name (its zones often differ from Nova's)."""
        if self._volume_zones is None:
            got, _ = await self.block_storage.call(
                "GET", "/os-availability-zone", "list volume zones"
            )
            self._volume_zones = {
                str(z["zoneName"])
                for z in got.get("availabilityZoneInfo", [])
                if (z.get("zoneState") or {}).get("available")
            }
        return zone if zone in self._volume_zones else None

    async def create_volume(self, request: VolumeRequest) -> Resource:
        p = request.profile
        name = p.name or request.name
        what = f"volume {name}"
        if not await self.volumes_available():
            raise PermanentError(f"{what}: this cloud offers no block-storage service")
        existing = await self._find_volume(request.key)
        if existing is not None and str(existing.get("status", "")).startswith("error"):
            await self._delete_volume(str(existing["id"]), what)
            existing = None
        if existing is None:
            volume: Json = {
                "size": p.size_gb,
                "name": name,
                "metadata": {"shoal_node": request.key, "shoal_cluster": request.cluster},
            }
            if p.volume_type:
                volume["volume_type"] = p.volume_type
            zone = await self._cinder_zone(request.zone)
            if zone is not None:
                volume["availability_zone"] = zone
            made, _ = await self.block_storage.call(
                "POST", "/volumes", f"create {what}", body={"volume": volume}
            )
            volume_id = str(made["volume"]["id"])
        else:
            volume_id = str(existing["id"])
        done = await self._wait_volume(
            volume_id, what, lambda v: v is None or v.get("status") in ("available", "in-use")
        )
        if done is None:
            raise ResourceGone(f"{what} disappeared")
        return volume_resource(done)

    async def attach_volume(self, volume_id: str, server_id: str) -> None:
        volume = await self._get_volume(volume_id)
        if volume is None:
            raise ResourceGone(f"volume {volume_id} does not exist")
        what = f"volume {volume.get('name')}"
        holders = {str(a.get("server_id")) for a in volume.get("attachments") or []}
        if server_id in holders:
            return
        if holders:
            raise PermanentError(f"{what} is in use by server {', '.join(sorted(holders))}")
        await self._live_server(server_id)
        await self.compute.call(
            "POST",
            f"/servers/{server_id}/os-volume_attachments",
            f"attach {what}",
            body={"volumeAttachment": {"volumeId": volume_id}},
        )

        def attached(v: Json | None) -> bool:
            return v is None or any(
                str(a.get("server_id")) == server_id for a in v.get("attachments") or []
            )

        if await self._wait_volume(volume_id, f"attaching {what}", attached) is None:
            raise ResourceGone(f"{what} disappeared while attaching")

    async def _delete_volume(self, volume_id: str, what: str) -> None:
        volume = await self._get_volume(volume_id)
        if volume is None:
            return
        for a in volume.get("attachments") or []:
            server = a.get("server_id")
            await self.compute.call(
                "DELETE",
                f"/servers/{server}/os-volume_attachments/{volume_id}",
                f"detach {what}",
                missing_ok=True,
            )
        if volume.get("attachments"):
            await self._wait_volume(
                volume_id, f"detaching {what}", lambda v: v is None or not v.get("attachments")
            )
        await self.block_storage.call(
            "DELETE", f"/volumes/{volume_id}", f"delete {what}", missing_ok=True
        )
        await self._wait_volume(volume_id, f"deleting {what}", lambda v: v is None)

    # -- both --------------------------------------------------------------------------------

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        if kind is NodeKind.SERVER:
            await self._delete_server(resource_id, f"server {resource_id}")
        else:
            if not await self.volumes_available():
                return
            await self._delete_volume(resource_id, f"volume {resource_id}")

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        if kind is NodeKind.SERVER:
            server = await self._get_server(resource_id)
            if server is not None:
                return server_resource(server)
        elif await self.volumes_available():
            volume = await self._get_volume(resource_id)
            if volume is not None:
                return volume_resource(volume)
        return Resource(resource_id, "", kind, "", ResourceState.MISSING)

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        tag = cluster_tag(cluster) if cluster else TAG
        servers = await list_servers(self.compute, f"tags={quote(tag)}", "list servers")
        out = [
            server_resource(s)
            for s in servers
            if s.get("status") not in ("DELETED", "SOFT_DELETED")
        ]
        if await self.volumes_available():
            wanted = {"shoal_cluster": cluster} if cluster else {}
            query = f"?metadata={quote(json.dumps(wanted))}" if wanted else ""
            found, _ = await self.block_storage.call(
                "GET", f"/volumes/detail{query}", "list volumes"
            )
            out.extend(
                volume_resource(v)
                for v in found.get("volumes", [])
                if "shoal_node" in (v.get("metadata") or {})
            )
        return out

    # -- networks (netdriver.py drives these) -----------------------------------------------

    async def release_ports(self, node: str) -> None:
        await self.neutron.delete_node(node)

    async def ensure_networks(self, request: NetworksRequest) -> NetworkResources:
        return await self.neutron.ensure_networks(request)

    async def ensure_port(self, request: PortRequest) -> Port:
        return await self.neutron.ensure_port(request)

    async def delete_port(self, port_id: str) -> None:
        await self.neutron.delete_port(port_id)

    async def ensure_floating_ip(self, request: FloatingIpRequest) -> FloatingIp:
        return await self.neutron.ensure_floating_ip(request)

    async def load_balancers_available(self) -> bool:
        """Whether the cloud has Octavia (probed once)."""
        if self._has_octavia is None:
            try:
                await self.load_balancer_api.call(
                    "GET", "/lbaas/loadbalancers?limit=1", "list load balancers"
                )
                self._has_octavia = True
            except PermanentError:
                self._has_octavia = False
        return self._has_octavia

    async def ensure_load_balancer(self, request: LoadBalancerRequest) -> LoadBalancer:
        if not await self.load_balancers_available():
            raise PermanentError(
                f"load balancer {request.name}: this cloud offers no load-balancer service"
            )
        subnet = await self.neutron.subnet_of(request.cluster, request.network)
        return await self.octavia.ensure(request, subnet)

    async def set_members(self, cluster: str, key: str, members: list[Member]) -> LoadBalancer:
        return await self.octavia.set_members(cluster, key, members)

    async def delete_networks(self, cluster: str) -> None:
        if await self.load_balancers_available():
            await self.octavia.delete_all(cluster)
        await self.neutron.delete_all(cluster)

    async def list_network_resources(self, cluster: str | None = None) -> list[NetResource]:
        out = await self.neutron.list_resources(cluster)
        if await self.load_balancers_available():
            out.extend(await self.octavia.list_resources(cluster))
        return out

    async def close(self) -> None:
        conn = self._connection
        self._connection = None
        if conn is not None:
            with contextlib.suppress(ProviderError, OSError, RuntimeError):
                conn.close()
        self._executor.shutdown(wait=False, cancel_futures=True)

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

In parts (issue 40): the clients (clients.py), servers in Nova (nova.py), volumes in Cinder
(cinder.py), the cluster networking (netdriver.py over neutron.py and octavia.py); this class
discovers the cloud and routes the Provider protocol's calls to them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from shoal.model.enums import NodeKind
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import Resource, ResourceState, ServerRequest, VolumeRequest
from shoal.providers.errors import PermanentError
from shoal.providers.openstack import inventory as discovery
from shoal.providers.openstack.cinder import CinderVolumes, volume_resource
from shoal.providers.openstack.clients import OpenStackClients
from shoal.providers.openstack.netdriver import OpenStackNetworks
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
from shoal.providers.openstack.nova import (
    PORTS_MARK,
    NovaParts,
    NovaServers,
    cluster_tag,
    node_tag,
    server_resource,
)
from shoal.providers.openstack.octavia import Octavia
from shoal.providers.openstack.options import OpenStackOptions
from shoal.providers.openstack.servergroups import ServerGroups
from shoal.providers.openstack.watch import ServerWatch, Sleep

__all__ = [
    "PORTS_MARK",
    "OpenStackProvider",
    "cluster_tag",
    "node_tag",
    "server_resource",
    "volume_resource",
]


class OpenStackProvider:
    """Servers in Nova and volumes in Cinder, for one project of one cloud."""

    name = "openstack"

    def __init__(
        self,
        connection: Callable[[], Any],
        options: OpenStackOptions | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        o = options if options is not None else OpenStackOptions()
        self.options = o
        self.agent_poll_s = o.agent_poll_s
        self.clients = OpenStackClients(connection, o.concurrency, o.request_timeout_s)
        self.compute = self.clients.compute
        self.neutron = Neutron(self.clients.network)
        self.octavia = Octavia(
            self.clients.load_balancer,
            poll_interval_s=o.poll_interval_s,
            timeout_s=o.boot_timeout_s,
            sleep=sleep,
        )
        self.networking = OpenStackNetworks(self.neutron, self.octavia)
        """The cluster networking the engine drives (engine/networks.py; netdriver.py)."""
        self._mode = None if o.mode == "auto" else o.mode
        self._has_volumes: bool | None = None
        self._has_octavia: bool | None = None
        self._servers = NovaServers(
            NovaParts(
                compute=self.clients.compute,
                network_api=self.clients.network,
                neutron=self.neutron,
                networking=self.networking,
                watch=ServerWatch(self.clients.compute, o.poll_interval_s, sleep),
                groups=ServerGroups(self.clients.compute),
                mode=self.mode,
            ),
            o,
        )
        self._volumes = CinderVolumes(
            self.clients.block_storage, self.clients.compute, self._servers.live, o, sleep
        )

    def _conn(self) -> Any:
        return self.clients.conn()

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
                await self.clients.block_storage.call("GET", "/volumes?limit=1", "list volumes")
                self._has_volumes = True
            except PermanentError:
                self._has_volumes = False
        return self._has_volumes

    async def inventory(self) -> Inventory:
        o = self.options
        volume_gb = discovery.VOLUME_GB_WITH_CINDER if await self.volumes_available() else 0
        if await self.mode() == "admin":
            hosts = await discovery.admin_hosts(
                self.compute,
                cpu_ratio=o.cpu_allocation_ratio,
                ram_ratio=o.ram_allocation_ratio,
                volume_gb=volume_gb,
            )
        else:
            hosts = await discovery.tenant_hosts(
                self.compute, slots=o.slots_per_zone, volume_gb=volume_gb
            )
        flavors = await discovery.flavors(self.compute)
        images = await discovery.images(self.clients.image, self.compute)
        return Inventory(hosts=hosts, flavors=flavors, images=images)

    # -- the Provider protocol ---------------------------------------------------------------

    async def create_server(self, request: ServerRequest) -> Resource:
        return await self._servers.create(request)

    async def reboot(self, server_id: str) -> Resource:
        return await self._servers.reboot(server_id)

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        return await self._servers.rebuild(server_id, profile)

    async def create_volume(self, request: VolumeRequest) -> Resource:
        if not await self.volumes_available():
            name = request.profile.name or request.name
            raise PermanentError(f"volume {name}: this cloud offers no block-storage service")
        return await self._volumes.create(request)

    async def attach_volume(self, volume_id: str, server_id: str) -> None:
        await self._volumes.attach(volume_id, server_id)

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        if kind is NodeKind.SERVER:
            await self._servers.delete(resource_id, f"server {resource_id}")
        elif await self.volumes_available():
            await self._volumes.delete(resource_id, f"volume {resource_id}")

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        if kind is NodeKind.SERVER:
            server = await self._servers.get(resource_id)
            if server is not None:
                return server_resource(server)
        elif await self.volumes_available():
            volume = await self._volumes.get(resource_id)
            if volume is not None:
                return volume_resource(volume)
        return Resource(resource_id, "", kind, "", ResourceState.MISSING)

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        out = await self._servers.listed(cluster)
        if await self.volumes_available():
            out.extend(await self._volumes.listed(cluster))
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
                await self.clients.load_balancer.call(
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
        self.clients.close()

"""Servers in Nova, for the openstack provider: found by their node's tag, booted pinned (admin)
or in a server group (tenant), settled, restarted, rebuilt, deleted with the ports Shoal made
for them. Nova's answers become Shoal's states and errors here (see provider.py)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import quote

from shoal.model.enums import NodeKind
from shoal.model.heat_agent import CollectorSettings
from shoal.model.profile import ServerProfile
from shoal.providers.base import Resource, ResourceState, ServerRequest
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.openstack.netdriver import OpenStackNetworks
from shoal.providers.openstack.neutron import Neutron
from shoal.providers.openstack.nova_ports import NovaPorts
from shoal.providers.openstack.options import OpenStackOptions
from shoal.providers.openstack.rest import Json, Rest
from shoal.providers.openstack.servergroups import ServerGroups
from shoal.providers.openstack.userdata import agent_user_data
from shoal.providers.openstack.watch import TAG, ServerWatch, list_servers

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


@dataclass(frozen=True, slots=True)
class NovaParts:
    """What the servers part uses: the clients, the cluster networking that makes a server's
    ports, the watch that polls servers, server groups, and how Shoal places (`mode`)."""

    compute: Rest
    network_api: Rest
    neutron: Neutron
    networking: OpenStackNetworks
    watch: ServerWatch
    groups: ServerGroups
    mode: Callable[[], Awaitable[str]]


class NovaServers:
    def __init__(self, parts: NovaParts, options: OpenStackOptions) -> None:
        self._p = parts
        self._o = options
        self._ports = NovaPorts(parts.network_api, parts.neutron, parts.networking, options.network)

    async def create(self, request: ServerRequest) -> Resource:
        what = f"server {request.profile.name or request.name}"
        existing = None if request.fresh else await self._find(request.key)
        if existing is not None:
            found = await self._resume(request, existing, what)
            if found is not None:
                return found
        try:
            if request.networking is not None:
                request = dataclasses.replace(
                    request, ports=await self._ports.server_ports(request, request.networking)
                )
            server_id = await self._boot(request)
        except PermanentError:
            if request.networking is not None:
                await self._p.neutron.delete_node(request.key)
            raise
        try:
            made = await self._settle(server_id, what)
        except PermanentError:
            # A server Nova could not place is of no use; leave nothing behind.
            await self.delete(server_id, what)
            raise
        await self._ports.floating_ips(request, server_id)
        return made

    async def _resume(self, request: ServerRequest, existing: Json, what: str) -> Resource | None:
        """An earlier attempt's server, carried on with; None when it was of no use (it
        never reached a host: deleted, so the create makes it afresh)."""
        server_id = str(existing["id"])
        status = existing.get("status")
        if status == "ACTIVE":
            await self._ports.floating_ips(request, server_id)
            return server_resource(existing)
        if status == "ERROR" and not existing.get("OS-EXT-SRV-ATTR:host"):
            await self.delete(server_id, what)
            return None
        if status in ("ERROR", "SHUTOFF"):
            return await self.reboot(server_id)
        return await self._settle(server_id, what)

    async def _find(self, key: str) -> Json | None:
        """The live server an earlier attempt made for node `key`, if any."""
        found = await list_servers(self._p.compute, f"tags={quote(node_tag(key))}", "find server")
        live = [s for s in found if s.get("status") not in ("DELETED", "SOFT_DELETED")]
        return live[0] if live else None

    async def _server_body(self, request: ServerRequest) -> Json:
        """The server Nova is asked to boot, but for where it goes (`_place`)."""
        p = request.profile
        name = p.name or request.name
        networks: str | list[Json]
        if request.ports:
            networks = [{"port": port} for port in request.ports]
        else:
            networks = await self._ports.network_refs(p)
        server: Json = {
            "name": name,
            "imageRef": p.image.id,
            "flavorRef": p.flavor.id,
            "networks": networks,
            "metadata": {**p.metadata, "shoal_node": request.key, "shoal_cluster": request.cluster},
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
            settings = CollectorSettings(
                request.metadata_url, polling_interval=self._o.agent_poll_s
            )
            try:
                server["user_data"] = agent_user_data(settings)
            except ValueError as e:
                raise PermanentError(f"server {name}: {e}") from e
        return server

    async def _place(self, request: ServerRequest, body: Json) -> str | None:
        """Where the server goes: its host pinned (admin) or its zone and server group
        (tenant). The group's id, when it has one."""
        server = body["server"]
        if await self._p.mode() == "admin":
            if self._o.pin == "force":
                server["availability_zone"] = f"{request.zone}:{request.host}"
            else:
                server["availability_zone"] = request.zone
                server["host"] = request.host
            return None
        server["availability_zone"] = request.zone
        if request.server_group is None:
            return None
        async with self._p.groups.lock(request.cluster):
            group_id = await self._p.groups.ensure(request.cluster, request.server_group)
        body["os:scheduler_hints"] = {"group": group_id}
        server["metadata"]["shoal_server_group"] = group_id
        return group_id

    async def _boot(self, request: ServerRequest) -> str:
        body: Json = {"server": await self._server_body(request)}
        name = body["server"]["name"]
        group_id = await self._place(request, body)
        try:
            made, _ = await self._p.compute.call(
                "POST", "/servers", f"create server {name}", body=body
            )
        except PermanentError as e:
            if group_id is not None and group_id in (e.fault or ""):
                # Its group was deleted with its last member meanwhile: make it again.
                self._p.groups.forget(group_id)
                raise TemporaryError(f"server group of {name} was just deleted") from e
            raise
        return str(made["server"]["id"])

    async def _settle(self, server_id: str, what: str) -> Resource:
        """Wait for the server to leave its transition; ACTIVE, or an error with Nova's fault."""

        def settled(s: Json | None) -> bool:
            return s is None or s.get("status") in ("ACTIVE", "ERROR", "SHUTOFF")

        server = await self._p.watch.wait(server_id, what, settled, self._o.boot_timeout_s)
        if server is None:
            raise ResourceGone(f"{what} disappeared")
        if server["status"] == "ACTIVE":
            return server_resource(server)
        fault = _fault(server) or None
        if server["status"] == "SHUTOFF":
            raise TemporaryError(f"{what} stopped instead of starting", fault=fault)
        # Nova's own words are all it gives for an unplaceable server (its API has no code).
        if fault and "no valid host" in fault.lower():
            raise PermanentError(f"Nova found no valid host for {what}", fault=fault)
        raise TemporaryError(f"{what} went to ERROR", fault=fault)

    async def get(self, server_id: str) -> Json | None:
        return await self._p.watch.get(server_id, f"server {server_id}")

    async def _alive(self, server_id: str) -> bool:
        return await self.get(server_id) is not None

    async def live(self, server_id: str) -> Json:
        """The server, or ResourceGone when it is gone or its host's compute service is down."""
        server = await self.get(server_id)
        if server is None:
            raise ResourceGone(f"server {server_id} does not exist")
        if server.get("host_status") == "DOWN":
            raise ResourceGone(
                f"server {server.get('name')} is on host "
                f"{server.get('OS-EXT-SRV-ATTR:host')}, whose compute service is down"
            )
        return server

    async def reboot(self, server_id: str) -> Resource:
        server = await self.live(server_id)
        what = f"server {server.get('name')}"
        if server.get("status") == "SHUTOFF":
            action: Json = {"os-start": None}
        else:
            action = {"reboot": {"type": "HARD"}}
        await self._p.compute.call(
            "POST", f"/servers/{server_id}/action", f"restart {what}", body=action
        )
        return await self._settle(server_id, what)

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        server = await self.live(server_id)
        what = f"server {server.get('name')}"
        flavor = (server.get("flavor") or {}).get("original_name")
        if flavor is not None and flavor != profile.flavor.name:
            raise PermanentError(
                f"{what} has flavor {flavor}; rebuilding it as {profile.flavor.name} needs a "
                "resize, which this provider does not do: replace the node instead"
            )
        await self._p.compute.call(
            "POST",
            f"/servers/{server_id}/action",
            f"rebuild {what}",
            body={"rebuild": {"imageRef": profile.image.id}},
        )
        return await self._settle(server_id, what)

    async def delete(self, server_id: str, what: str) -> None:
        server = await self.get(server_id)
        if server is None:
            return
        metadata = server.get("metadata") or {}
        group = metadata.get("shoal_server_group")
        await self._p.compute.call(
            "DELETE", f"/servers/{server_id}", f"delete {what}", missing_ok=True
        )
        await self._p.watch.wait(server_id, what, lambda s: s is None, self._o.boot_timeout_s)
        node = metadata.get("shoal_node")
        if metadata.get(PORTS_MARK) and node:
            # Its ports go after it (Neutron refuses to delete a port still bound to a server).
            await self._p.neutron.delete_node(str(node))
        if group:
            cluster = str(metadata.get("shoal_cluster", ""))
            async with self._p.groups.lock(cluster):
                await self._p.groups.release(str(group), self._alive)

    async def listed(self, cluster: str | None) -> list[Resource]:
        tag = cluster_tag(cluster) if cluster else TAG
        servers = await list_servers(self._p.compute, f"tags={quote(tag)}", "list servers")
        return [
            server_resource(s)
            for s in servers
            if s.get("status") not in ("DELETED", "SOFT_DELETED")
        ]

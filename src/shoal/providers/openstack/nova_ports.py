"""The networks and ports a Nova server boots on (issue 26): the profile's networks by name or
id, the ports Shoal makes before the boot when the cluster declares them (keyed by node and
network, so a retried create finds them), and floating IPs on them or on the ports Nova made."""

from __future__ import annotations

import dataclasses
import re
from urllib.parse import quote

from shoal.model.profile import ServerProfile
from shoal.providers.base import ServerRequest
from shoal.providers.errors import PermanentError, TemporaryError
from shoal.providers.networking import ServerNetworking
from shoal.providers.openstack.netdriver import OpenStackNetworks, port_name
from shoal.providers.openstack.netspec import FloatingIpRequest, Port, PortRequest
from shoal.providers.openstack.neutron import Neutron
from shoal.providers.openstack.rest import Json, Rest

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")


class NovaPorts:
    def __init__(
        self, network_api: Rest, neutron: Neutron, networking: OpenStackNetworks, default: str
    ) -> None:
        self._api = network_api
        self._neutron = neutron
        self._networking = networking
        self._default = default
        """Where a server with no networks of its own attaches: auto, none, or an id."""
        self._networks: dict[str, str] = {}
        """Network name -> id, looked up once."""

    async def network_refs(self, profile: ServerProfile) -> str | list[Json]:
        if not profile.networks:
            if self._default in ("auto", "none"):
                return self._default
            return [{"uuid": self._default}]
        refs: list[Json] = []
        for net in profile.networks:
            if _UUID.match(net):
                refs.append({"uuid": net})
                continue
            if net not in self._networks:
                found, _ = await self._api.call(
                    "GET", f"/networks?name={quote(net)}", f"find network {net}"
                )
                nets = found.get("networks", [])
                if not nets:
                    raise PermanentError(f"no network named {net!r}")
                self._networks[net] = str(nets[0]["id"])
            refs.append({"uuid": self._networks[net]})
        return refs

    async def floating_ips(self, request: ServerRequest, server_id: str) -> None:
        """The profile's `floating_networks` (Senlin's `floating_network`, issue 26): a
        floating IP of the server's own, from the external network, on the port Nova made on
        that network; keyed by node and network, so a retried create finds it, and tagged
        with the node, so the server's delete removes it (`PORTS_MARK`). A failure is
        temporary (the create is retried; the server is found, the IP made then)."""
        what = f"server {request.profile.name or request.name}"
        for net, external in request.profile.floating_networks:
            refs = await self.network_refs(dataclasses.replace(request.profile, networks=(net,)))
            assert isinstance(refs, list)  # a profile with networks names them
            ref = refs[0]
            found, _ = await self._api.call(
                "GET",
                f"/ports?device_id={quote(server_id)}&network_id={quote(str(ref['uuid']))}",
                f"find the port of {what} on {net}",
            )
            ports = found.get("ports") or []
            if not ports:
                raise TemporaryError(f"{what} has no port on network {net} yet")
            await self._neutron.ensure_floating_ip(
                FloatingIpRequest(
                    key=f"fip:{net}:{request.key}",
                    cluster=request.cluster,
                    external_network=external,
                    port_id=str(ports[0]["id"]),
                    node=request.key,
                )
            )

    async def server_ports(self, request: ServerRequest, net: ServerNetworking) -> tuple[str, ...]:
        """The server's ports and floating IPs, made before it boots (found when made before)."""
        # The engine prepared the cluster's networks already, under its lease across engines
        # (engine/netlease.py), so this finds them prepared; it makes them only when that failed.
        await self._networking.prepare(net.cluster)
        ports: list[Port] = []
        for spec in net.ports:
            label = spec.name or spec.network
            ports.append(
                await self._neutron.ensure_port(
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
            await self._neutron.ensure_floating_ip(
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

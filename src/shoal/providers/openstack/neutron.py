"""A cluster's networks, subnets, routers, security groups, ports and floating IPs in Neutron.

Crash-safety is the servers' (provider.py): a create retried after a `kill -9` finds what the
dead attempt made instead of making a second. Every resource ends up tagged `shoal`,
`shoal-cluster:<cluster>` and `shoal-key:<key>`, and a create lists by those tags first. Neutron
29 takes no tags in a create call (ports excepted, and only with an ML2 extension driver), so
there is a moment between the create and `PUT .../tags` when the resource is unmarked; to
cover it, each one is created with `description = shoal-cluster:<cluster>` (the one field every
kind has and Neutron filters on exactly), and a retry that finds nothing by tags looks for an
untagged resource with that description and its name (a floating IP: its port), tags it and
adopts it. The cluster's delete lists by tag and by description, so nothing escapes it either.
Security group rules cannot carry tags; they are matched by their fields instead, so making
them again is harmless too.

A failure Neutron reports while a cluster's networks are being made (an overlapping CIDR on a
router, a fixed IP outside its subnet...) is a `PermanentError` with Neutron's own message, and
`ensure_networks` first deletes everything it made for the cluster, so nothing is left behind
(when it was making them for the first time: a refused later change leaves the running
cluster's networks alone).

Deletion runs in dependency order, each step listing by the cluster tag: floating IPs, ports,
router interfaces and routers, networks (their subnets go with them), security groups.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from shoal.providers.errors import PermanentError
from shoal.providers.openstack.netspec import (
    FloatingIp,
    FloatingIpRequest,
    NetKind,
    NetResource,
    NetworkResources,
    NetworkSpec,
    NetworksRequest,
    Port,
    PortRequest,
    RuleProtocol,
    RuleSpec,
    SecurityGroupSpec,
    SubnetSpec,
)
from shoal.providers.openstack.neutron_tags import (
    TAG,
    Tagged,
    Wanted,
    cluster_tag,
    key_tag,
    node_tag,
    tags_for,
)
from shoal.providers.openstack.neutron_teardown import ClusterTeardown
from shoal.providers.openstack.rest import Json, Rest

__all__ = ["TAG", "Neutron", "cluster_tag", "key_tag", "node_tag", "tags_for"]


def _rule_body(group_id: str, rule: RuleSpec, groups: dict[str, str]) -> Json:
    ethertype = "IPv4"
    if rule.remote_cidr is not None:
        ethertype = f"IPv{ipaddress.ip_network(rule.remote_cidr, strict=False).version}"
    body: Json = {
        "security_group_id": group_id,
        "direction": rule.direction.value,
        "ethertype": ethertype,
    }
    if rule.protocol is not RuleProtocol.ANY:
        body["protocol"] = rule.protocol.value
        if rule.protocol is not RuleProtocol.ICMP and rule.port_min is not None:
            body["port_range_min"] = rule.port_min
            body["port_range_max"] = rule.port_max if rule.port_max is not None else rule.port_min
    if rule.remote_group is not None:
        body["remote_group_id"] = groups[rule.remote_group]
    elif rule.remote_cidr is not None:
        body["remote_ip_prefix"] = str(ipaddress.ip_network(rule.remote_cidr, strict=False))
    return body


_RULE_FIELDS = (
    "direction",
    "ethertype",
    "protocol",
    "port_range_min",
    "port_range_max",
    "remote_group_id",
    "remote_ip_prefix",
)


def _rule_sig(rule: Json) -> tuple[object, ...]:
    return tuple(rule.get(f) for f in _RULE_FIELDS)


class Neutron:
    """Neutron calls for the openstack provider, one instance per provider."""

    def __init__(
        self,
        api: Rest,
        *,
        poll_interval_s: float = 1.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.tagged = Tagged(api)
        self.poll_interval_s = poll_interval_s
        self._sleep = sleep
        self._externals: dict[str, str] = {}

    # -- generic tagged resources ------------------------------------------------------------

    @property
    def api(self) -> Rest:
        return self.tagged.api

    @api.setter
    def api(self, api: Rest) -> None:
        self.tagged.api = api

    async def list_tagged(self, kind: NetKind, tags: list[str]) -> list[Json]:
        return await self.tagged.list_tagged(kind, tags)

    async def owned(self, kind: NetKind, cluster: str) -> list[Json]:
        return await self.tagged.owned(kind, cluster)

    # -- cluster-wide ------------------------------------------------------------------------

    async def external_network(self, name: str) -> str:
        if name not in self._externals:
            found, _ = await self.api.call(
                "GET",
                f"/networks?router%3Aexternal=True&name={quote(name)}",
                f"find external network {name}",
            )
            nets = found.get("networks", [])
            if not nets:
                found, _ = await self.api.call(
                    "GET", f"/networks?router%3Aexternal=True&id={quote(name)}", "find network"
                )
                nets = found.get("networks", [])
            if not nets:
                raise PermanentError(f"no external network named {name!r}")
            self._externals[name] = str(nets[0]["id"])
        return self._externals[name]

    async def _ensure_network(self, cluster: str, spec: NetworkSpec, out: NetworkResources) -> None:
        net = await self.tagged.ensure(
            Wanted(
                NetKind.NETWORK,
                cluster,
                f"net:{spec.name}",
                {"name": spec.name, "admin_state_up": True},
                f"network {spec.name}",
                {"name": spec.name},
            )
        )
        out.networks[spec.name] = str(net["id"])
        subnets = []
        for i, sub in enumerate(spec.subnets):
            subnet = await self._ensure_subnet(cluster, spec.name, i, sub, str(net["id"]))
            subnets.append(str(subnet["id"]))
            if i == 0:
                out.subnets[spec.name] = str(subnet["id"])
        if spec.external is None:
            return
        external = await self.external_network(spec.external)
        router = await self.tagged.ensure(
            Wanted(
                NetKind.ROUTER,
                cluster,
                f"router:{spec.name}",
                {"name": spec.name, "external_gateway_info": {"network_id": external}},
                f"router {spec.name}",
                {"name": spec.name},
            )
        )
        out.routers[spec.name] = str(router["id"])
        joined, _ = await self.api.call(
            "GET",
            f"/ports?device_id={router['id']}&network_id={net['id']}",
            f"list interfaces of router {spec.name}",
        )
        on = {str(ip["subnet_id"]) for p in joined.get("ports", []) for ip in p["fixed_ips"]}
        for subnet_id in subnets:
            if subnet_id not in on:
                await self.api.call(
                    "PUT",
                    f"/routers/{router['id']}/add_router_interface",
                    f"join router {spec.name} to its subnet",
                    body={"subnet_id": subnet_id},
                )

    async def _ensure_subnet(
        self, cluster: str, network: str, index: int, spec: SubnetSpec, network_id: str
    ) -> Json:
        # The first subnet keeps the key a network's one subnet always had (`subnet_of`).
        key = f"subnet:{network}" if index == 0 else f"subnet:{network}/{spec.name}"
        body: Json = {
            "name": spec.name,
            "network_id": network_id,
            "cidr": spec.cidr,
            "ip_version": ipaddress.ip_network(spec.cidr, strict=False).version,
            "enable_dhcp": spec.dhcp,
        }
        if spec.dns:
            body["dns_nameservers"] = list(spec.dns)
        if spec.gateway is not None:
            body["gateway_ip"] = spec.gateway
        return await self.tagged.ensure(
            Wanted(
                NetKind.SUBNET,
                cluster,
                key,
                body,
                f"subnet {spec.name} of network {network}",
                {"name": spec.name, "network_id": network_id},
            )
        )

    async def _ensure_group(
        self, cluster: str, spec: SecurityGroupSpec, groups: dict[str, str]
    ) -> None:
        group = await self.tagged.ensure(
            Wanted(
                NetKind.SECURITY_GROUP,
                cluster,
                f"sg:{spec.name}",
                {"name": spec.name},
                f"security group {spec.name}",
                {"name": spec.name},
            )
        )
        groups[spec.name] = str(group["id"])

    async def _sync_rules(
        self, spec: SecurityGroupSpec, groups: dict[str, str], *, prune: bool = True
    ) -> None:
        """The group's ingress rules become exactly the spec's; its egress rules too when the
        spec has any (else egress is left as Neutron made it: everything allowed out)."""
        group_id = groups[spec.name]
        wanted = [_rule_body(group_id, r, groups) for r in spec.rules]
        have, _ = await self.api.call(
            "GET",
            f"/security-group-rules?security_group_id={group_id}",
            f"list rules of security group {spec.name}",
        )
        managed = {"ingress", "egress"} if spec.manages_egress else {"ingress"}
        existing = [r for r in have.get("security_group_rules", []) if r["direction"] in managed]
        wanted_sigs = {_rule_sig(w) for w in wanted}
        existing_sigs = {_rule_sig(r) for r in existing}
        for rule in existing if prune else ():
            if _rule_sig(rule) not in wanted_sigs:
                await self.api.call(
                    "DELETE",
                    f"/security-group-rules/{rule['id']}",
                    f"delete a rule of security group {spec.name}",
                    missing_ok=True,
                )
        for body in wanted:
            if _rule_sig(body) in existing_sigs:
                continue
            existing_sigs.add(_rule_sig(body))
            await self.api.call(
                "POST",
                "/security-group-rules",
                f"add a rule to security group {spec.name}",
                body={"security_group_rule": body},
            )

    async def ensure_networks(
        self, request: NetworksRequest, *, prune_rules: bool = True
    ) -> NetworkResources:
        """Everything cluster-wide made (found by key when made before). `prune_rules` False
        adds the missing rules and removes none (a server about to boot needs its groups with
        their rules; those naming the cluster's current servers are the `NetworkDriver`'s to
        keep, and the request made for a boot does not know them)."""
        out = NetworkResources()
        # Only a first make is rolled back on a refusal: a later change refused must not tear
        # down the networks a running cluster is using.
        fresh = not await self.owned(NetKind.NETWORK, request.cluster) and not await self.owned(
            NetKind.SECURITY_GROUP, request.cluster
        )
        try:
            for spec in request.networks:
                await self._ensure_network(request.cluster, spec, out)
            for group in request.security_groups:
                await self._ensure_group(request.cluster, group, out.security_groups)
            for group in request.security_groups:
                await self._sync_rules(group, out.security_groups, prune=prune_rules)
        except PermanentError:
            # Retrying cannot help: leave nothing of the cluster's networks behind.
            if fresh:
                await self.delete_all(request.cluster)
            raise
        return out

    # -- per server --------------------------------------------------------------------------

    async def subnet_of(self, cluster: str, network: str) -> str:
        """The id of the subnet of the cluster's network `network`."""
        subnet = await self.tagged.id_by_key(
            NetKind.SUBNET, cluster, f"subnet:{network}", f"network {network}"
        )
        return str(subnet["id"])

    async def ensure_port(self, request: PortRequest) -> Port:
        net = await self.tagged.id_by_key(
            NetKind.NETWORK, request.cluster, f"net:{request.network}", f"network {request.network}"
        )
        body: Json = {"name": request.name, "network_id": net["id"], "admin_state_up": True}
        if request.fixed_ip is not None:
            # Neutron finds which of the network's subnets holds the address.
            body["fixed_ips"] = [{"ip_address": request.fixed_ip}]
        groups = []
        for name in request.security_groups:
            group = await self.tagged.id_by_key(
                NetKind.SECURITY_GROUP, request.cluster, f"sg:{name}", f"security group {name}"
            )
            groups.append(group["id"])
        # No group named: none at all, not Neutron's `default` (which would let the project's
        # other servers in).
        body["security_groups"] = groups
        port = await self.tagged.ensure(
            Wanted(
                NetKind.PORT,
                request.cluster,
                request.key,
                body,
                f"port {request.name}",
                {"name": request.name, "network_id": str(net["id"])},
                request.node,
            )
        )
        return _port(port, request.key)

    async def delete_node(self, node: str) -> None:
        """The ports (and their floating IPs) made for Shoal node `node`; a no-op when none."""
        for fip in await self.list_tagged(NetKind.FLOATING_IP, [node_tag(node)]):
            await self.tagged.delete(NetKind.FLOATING_IP, str(fip["id"]), "floating IP")
        for port in await self.list_tagged(NetKind.PORT, [node_tag(node)]):
            await self.delete_port(str(port["id"]))

    async def delete_port(self, port_id: str) -> None:
        found, _ = await self.api.call(
            "GET", f"/floatingips?port_id={port_id}", "list floating IPs of a port"
        )
        for fip in found.get("floatingips", []):
            if TAG in (fip.get("tags") or []):
                await self.tagged.delete(NetKind.FLOATING_IP, str(fip["id"]), "floating IP")
        await self.tagged.delete(NetKind.PORT, port_id, f"port {port_id}")

    async def ensure_floating_ip(self, request: FloatingIpRequest) -> FloatingIp:
        external = await self.external_network(request.external_network)
        body: Json = {"floating_network_id": external, "port_id": request.port_id}
        if request.address is not None:
            body["floating_ip_address"] = request.address
        fip = await self.tagged.ensure(
            Wanted(
                NetKind.FLOATING_IP,
                request.cluster,
                request.key,
                body,
                f"floating IP for port {request.port_id}",
                {"port_id": request.port_id},
                request.node,
            )
        )
        if fip.get("port_id") != request.port_id:
            made, _ = await self.api.call(
                "PUT",
                f"/floatingips/{fip['id']}",
                "associate floating IP",
                body={"floatingip": {"port_id": request.port_id}},
            )
            fip = dict(made["floatingip"])
        return FloatingIp(
            id=str(fip["id"]),
            key=request.key,
            address=str(fip["floating_ip_address"]),
            port_id=fip.get("port_id"),
        )

    # -- teardown ----------------------------------------------------------------------------

    async def delete_all(self, cluster: str) -> None:
        """Everything Neutron holds for the cluster, dependents first; a no-op when gone."""
        await ClusterTeardown(self.tagged).delete_all(cluster)

    async def list_resources(self, cluster: str | None) -> list[NetResource]:
        return await ClusterTeardown(self.tagged).list_resources(cluster)


def _port(port: Json, key: str) -> Port:
    ips = port.get("fixed_ips") or []
    return Port(
        id=str(port["id"]),
        key=key,
        network_id=str(port["network_id"]),
        address=str(ips[0]["ip_address"]) if ips else None,
        status=str(port.get("status", "")),
    )

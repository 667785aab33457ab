"""A cluster's Neutron resources listed and deleted (neutron.py's module docstring): dependents
first, each kind listed by the cluster's tag and by its mark in their description, so nothing
an attempt made escapes the delete."""

from __future__ import annotations

from shoal.providers.errors import ProviderError
from shoal.providers.openstack.netspec import NetKind, NetResource
from shoal.providers.openstack.neutron_tags import (
    COLLECTIONS,
    TAG,
    Tagged,
    cluster_tag,
    tag_value,
)
from shoal.providers.openstack.rest import Json


class ClusterTeardown:
    def __init__(self, tagged: Tagged) -> None:
        self.tagged = tagged

    async def owned(self, kind: NetKind, cluster: str) -> list[Json]:
        return await self.tagged.owned(kind, cluster)

    async def delete_all(self, cluster: str) -> None:
        """Everything Neutron holds for the cluster, dependents first; a no-op when gone."""
        for fip in await self.owned(NetKind.FLOATING_IP, cluster):
            await self.tagged.delete(NetKind.FLOATING_IP, str(fip["id"]), "floating IP")
        for port in await self.owned(NetKind.PORT, cluster):
            await self.tagged.delete(NetKind.PORT, str(port["id"]), f"port {port.get('name')}")
        for router in await self.owned(NetKind.ROUTER, cluster):
            await self._delete_router(router)
        for net in await self.owned(NetKind.NETWORK, cluster):
            await self.tagged.delete(NetKind.NETWORK, str(net["id"]), f"network {net.get('name')}")
        # A subnet is deleted with its network; one left (its network deleted meanwhile by
        # someone else) is deleted by itself.
        for subnet in await self.owned(NetKind.SUBNET, cluster):
            await self.tagged.delete(
                NetKind.SUBNET, str(subnet["id"]), f"subnet {subnet.get('name')}"
            )
        for group in await self.owned(NetKind.SECURITY_GROUP, cluster):
            await self.tagged.delete(
                NetKind.SECURITY_GROUP, str(group["id"]), f"security group {group.get('name')}"
            )

    async def _delete_router(self, router: Json) -> None:
        what = f"router {router.get('name')}"
        found, _ = await self.tagged.api.call(
            "GET",
            f"/ports?device_id={router['id']}&device_owner=network%3Arouter_interface",
            f"list interfaces of {what}",
        )
        for port in found.get("ports", []):
            for ip in port.get("fixed_ips") or []:
                try:
                    await self.tagged.api.call(
                        "PUT",
                        f"/routers/{router['id']}/remove_router_interface",
                        f"detach {what} from its subnet",
                        body={"subnet_id": ip["subnet_id"]},
                    )
                except ProviderError as e:
                    if e.fault is None or "not found" not in e.fault.lower():
                        raise
        await self.tagged.delete(NetKind.ROUTER, str(router["id"]), what)

    async def list_resources(self, cluster: str | None) -> list[NetResource]:
        tags = [cluster_tag(cluster)] if cluster else [TAG]
        out: list[NetResource] = []
        for kind in COLLECTIONS:
            for r in await self.tagged.list_tagged(kind, tags):
                rtags = list(r.get("tags") or [])
                out.append(
                    NetResource(
                        kind=kind,
                        id=str(r["id"]),
                        key=tag_value(rtags, "shoal-key:"),
                        cluster=tag_value(rtags, "shoal-cluster:"),
                        name=str(r.get("name") or r.get("floating_ip_address") or ""),
                        status=str(r.get("status") or "ACTIVE"),
                    )
                )
        return out

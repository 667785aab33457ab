"""Volumes in Cinder, for the openstack provider: found by their node's metadata, made in the
zone of their server when Cinder has one of that name, attached through Nova, detached and
deleted with waits on Cinder's own statuses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from shoal.model.enums import NodeKind
from shoal.providers.base import Resource, ResourceState, VolumeRequest
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.openstack.options import OpenStackOptions
from shoal.providers.openstack.rest import Json, Rest
from shoal.providers.openstack.watch import Sleep

_VOLUME_STATES = {
    "available": ResourceState.ACTIVE,
    "in-use": ResourceState.ACTIVE,
    "error": ResourceState.ERROR,
    "error_deleting": ResourceState.ERROR,
    "error_extending": ResourceState.ERROR,
    "deleted": ResourceState.MISSING,
}


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


class CinderVolumes:
    def __init__(
        self,
        block_storage: Rest,
        compute: Rest,
        live_server: Callable[[str], Awaitable[object]],
        options: OpenStackOptions,
        sleep: Sleep,
    ) -> None:
        self._api = block_storage
        self._compute = compute
        self._live_server = live_server
        """Raises ResourceGone when the server a volume is attached to is not there."""
        self._o = options
        self._sleep = sleep
        self._zones: set[str] | None = None

    async def _find(self, key: str) -> Json | None:
        query = quote(json.dumps({"shoal_node": key}))
        found, _ = await self._api.call("GET", f"/volumes/detail?metadata={query}", "find volume")
        for v in found.get("volumes", []):
            if (v.get("metadata") or {}).get("shoal_node") == key and v.get("status") != "deleting":
                return dict(v)
        return None

    async def get(self, volume_id: str) -> Json | None:
        body, _ = await self._api.call(
            "GET", f"/volumes/{volume_id}", f"show volume {volume_id}", missing_ok=True
        )
        volume = body.get("volume")
        return dict(volume) if volume is not None else None

    async def _wait(
        self, volume_id: str, what: str, done: Callable[[Json | None], bool]
    ) -> Json | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._o.boot_timeout_s
        while True:
            volume = await self.get(volume_id)
            if done(volume):
                return volume
            if volume is not None and str(volume.get("status", "")).startswith("error"):
                raise TemporaryError(f"{what} went to {volume['status']}")
            if loop.time() >= deadline:
                status = volume.get("status") if volume else "missing"
                raise TemporaryError(f"{what} is still {status} after {self._o.boot_timeout_s:g} s")
            await self._sleep(self._o.poll_interval_s)

    async def _zone(self, zone: str) -> str | None:
        """`zone` if Cinder has a zone of that name (its zones often differ from Nova's)."""
        if self._zones is None:
            got, _ = await self._api.call("GET", "/os-availability-zone", "list volume zones")
            self._zones = {
                str(z["zoneName"])
                for z in got.get("availabilityZoneInfo", [])
                if (z.get("zoneState") or {}).get("available")
            }
        return zone if zone in self._zones else None

    async def create(self, request: VolumeRequest) -> Resource:
        what = f"volume {request.profile.name or request.name}"
        existing = await self._find(request.key)
        if existing is not None and str(existing.get("status", "")).startswith("error"):
            await self.delete(str(existing["id"]), what)
            existing = None
        volume_id = await self._make(request, what) if existing is None else str(existing["id"])
        done = await self._wait(
            volume_id, what, lambda v: v is None or v.get("status") in ("available", "in-use")
        )
        if done is None:
            raise ResourceGone(f"{what} disappeared")
        return volume_resource(done)

    async def _make(self, request: VolumeRequest, what: str) -> str:
        p = request.profile
        volume: Json = {
            "size": p.size_gb,
            "name": p.name or request.name,
            "metadata": {"shoal_node": request.key, "shoal_cluster": request.cluster},
        }
        if p.volume_type:
            volume["volume_type"] = p.volume_type
        zone = await self._zone(request.zone)
        if zone is not None:
            volume["availability_zone"] = zone
        made, _ = await self._api.call(
            "POST", "/volumes", f"create {what}", body={"volume": volume}
        )
        return str(made["volume"]["id"])

    async def attach(self, volume_id: str, server_id: str) -> None:
        volume = await self.get(volume_id)
        if volume is None:
            raise ResourceGone(f"volume {volume_id} does not exist")
        what = f"volume {volume.get('name')}"
        holders = {str(a.get("server_id")) for a in volume.get("attachments") or []}
        if server_id in holders:
            return
        if holders:
            raise PermanentError(f"{what} is in use by server {', '.join(sorted(holders))}")
        await self._live_server(server_id)
        await self._compute.call(
            "POST",
            f"/servers/{server_id}/os-volume_attachments",
            f"attach {what}",
            body={"volumeAttachment": {"volumeId": volume_id}},
        )

        def attached(v: Json | None) -> bool:
            return v is None or any(
                str(a.get("server_id")) == server_id for a in v.get("attachments") or []
            )

        if await self._wait(volume_id, f"attaching {what}", attached) is None:
            raise ResourceGone(f"{what} disappeared while attaching")

    async def delete(self, volume_id: str, what: str) -> None:
        volume = await self.get(volume_id)
        if volume is None:
            return
        for a in volume.get("attachments") or []:
            server = a.get("server_id")
            await self._compute.call(
                "DELETE",
                f"/servers/{server}/os-volume_attachments/{volume_id}",
                f"detach {what}",
                missing_ok=True,
            )
        if volume.get("attachments"):
            await self._wait(
                volume_id, f"detaching {what}", lambda v: v is None or not v.get("attachments")
            )
        await self._api.call("DELETE", f"/volumes/{volume_id}", f"delete {what}", missing_ok=True)
        await self._wait(volume_id, f"deleting {what}", lambda v: v is None)

    async def listed(self, cluster: str | None) -> list[Resource]:
        wanted = {"shoal_cluster": cluster} if cluster else {}
        query = f"?metadata={quote(json.dumps(wanted))}" if wanted else ""
        found, _ = await self._api.call("GET", f"/volumes/detail{query}", "list volumes")
        return [
            volume_resource(v)
            for v in found.get("volumes", [])
            if "shoal_node" in (v.get("metadata") or {})
        ]

"""Nova server groups for Shoal's groupings, when Shoal places as a tenant.

A grouping of a cluster becomes one server group named `shoal-<cluster id>-<grouping>`, found by
that name after a restart (so a retried create joins the group it joined before) and made on
first use with the grouping's policy (`max_server_per_host` for anti-affinity with a limit,
microversion 2.64). A group is deleted once its last server is. One lock per cluster keeps a
create from joining a group while the last member's delete is removing it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from shoal.providers.base import ServerGroupHint
from shoal.providers.openstack.rest import Json, Rest


def group_name(cluster: str, grouping: str) -> str:
    return f"shoal-{cluster}-{grouping}"


class ServerGroups:
    """Find or make, and clean up, the server groups of Shoal's clusters."""

    def __init__(self, compute: Rest) -> None:
        self._compute = compute
        self._ids: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, cluster: str) -> asyncio.Lock:
        return self._locks.setdefault(cluster, asyncio.Lock())

    async def ensure(self, cluster: str, hint: ServerGroupHint) -> str:
        """The id of the group for `hint`'s grouping; call with `lock(cluster)` held."""
        name = group_name(cluster, hint.grouping)
        known = self._ids.get(name)
        if known is not None:
            return known
        listing, _ = await self._compute.call(
            "GET", "/os-server-groups?limit=1000", "list server groups"
        )
        for g in listing.get("server_groups", []):
            if g.get("name") == name:
                self._ids[name] = str(g["id"])
                return self._ids[name]
        body: Json = {"name": name, "policy": hint.policy}
        if hint.policy == "anti-affinity" and hint.max_per_host:
            body["rules"] = {"max_server_per_host": hint.max_per_host}
        made, _ = await self._compute.call(
            "POST",
            "/os-server-groups",
            f"create server group {name}",
            body={"server_group": body},
        )
        self._ids[name] = str(made["server_group"]["id"])
        return self._ids[name]

    def forget(self, group_id: str) -> None:
        for name, gid in list(self._ids.items()):
            if gid == group_id:
                del self._ids[name]

    async def release(self, group_id: str, alive: Callable[[str], Awaitable[bool]]) -> None:
        """Delete the group if no live server is left in it; call with the cluster's lock held.

        Nova drops a deleted server from its groups a little after the server itself is gone,
        so members are checked one by one with `alive`."""
        got, _ = await self._compute.call(
            "GET", f"/os-server-groups/{group_id}", "show server group", missing_ok=True
        )
        group = got.get("server_group")
        if group is None:
            self.forget(group_id)
            return
        for member in group.get("members") or []:
            if await alive(str(member)):
                return
        self.forget(group_id)
        await self._compute.call(
            "DELETE",
            f"/os-server-groups/{group_id}",
            f"delete server group {group.get('name')}",
            missing_ok=True,
        )

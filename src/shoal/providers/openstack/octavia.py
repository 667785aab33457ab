"""A cluster's load balancers in Octavia: one call makes the whole graph, members follow the
node group in one batch call.

Crash-safety: the balancer is created with its listeners, its pools (each with its health
monitor) in a single `POST /lbaas/loadbalancers` (Octavia's fully populated create),
tagged like Neutron's resources (`shoal`, `shoal-cluster:<cluster>`, `shoal-key:<key>`), so a
create retried after a crash either finds the balancer, whole, or makes it; there is no half
graph to repair. Members are set per pool with the pool's batch update (`PUT .../members`),
which makes the pool exactly the list given: the same call serves scale out, scale in,
replacement and a host failure, and repeating it changes nothing. Listeners changed alone
(a port, a protocol, the pool one sends to) are reconciled in place on the same balancer
(`_reconcile_listeners`); a changed set of pools still makes a new balancer (netdriver.py).

Octavia refuses any change while a balancer is PENDING_* (409, "immutable"): every change and
the delete wait for it to settle and try again until `timeout_s`, so deleting a cluster whose
balancer is still being provisioned waits instead of leaving it behind. A balancer that went to
ERROR is deleted and made again by a retried create.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from shoal.providers.errors import PermanentError, TemporaryError
from shoal.providers.openstack.netspec import (
    POOL,
    LoadBalancer,
    LoadBalancerRequest,
    Member,
    MemberState,
    NetKind,
    NetResource,
)
from shoal.providers.openstack.neutron import TAG, cluster_tag, key_tag, tags_for
from shoal.providers.openstack.rest import Json, Rest

_PENDING = ("PENDING_CREATE", "PENDING_UPDATE", "PENDING_DELETE")


def _tag_value(tags: list[str], prefix: str) -> str:
    for t in tags:
        if t.startswith(prefix):
            return t[len(prefix) :]
    return ""


def _balancer(lb: Json, members: list[tuple[str, Json]]) -> LoadBalancer:
    tags = list(lb.get("tags") or [])
    return LoadBalancer(
        id=str(lb["id"]),
        key=_tag_value(tags, "shoal-key:"),
        name=str(lb.get("name") or ""),
        vip_address=lb.get("vip_address"),
        status=str(lb.get("provisioning_status", "")),
        members=tuple(
            MemberState(
                key=str(m.get("name") or ""),
                address=str(m["address"]),
                port=int(m["protocol_port"]),
                health=str(m.get("operating_status", "")),
                pool=pool,
            )
            for pool, m in members
        ),
    )


class Octavia:
    """Octavia calls for the openstack provider."""

    def __init__(
        self,
        api: Rest,
        *,
        poll_interval_s: float = 1.0,
        timeout_s: float = 600.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.api = api
        self.poll_interval_s = poll_interval_s
        self.timeout_s = timeout_s
        self._sleep = sleep

    async def _list(self, tags: list[str]) -> list[Json]:
        query = quote(",".join(tags), safe=":,")
        found, _ = await self.api.call(
            "GET", f"/lbaas/loadbalancers?tags={query}", "list load balancers"
        )
        return [
            dict(lb)
            for lb in found.get("loadbalancers", [])
            if lb.get("provisioning_status") != "DELETED"
        ]

    async def _find(self, cluster: str, key: str) -> Json | None:
        found = await self._list([cluster_tag(cluster), key_tag(key)])
        return found[0] if found else None

    async def _get(self, lb_id: str) -> Json | None:
        body, _ = await self.api.call(
            "GET", f"/lbaas/loadbalancers/{lb_id}", f"show load balancer {lb_id}", missing_ok=True
        )
        lb = body.get("loadbalancer")
        if lb is None or lb.get("provisioning_status") == "DELETED":
            return None
        return dict(lb)

    async def _settle(self, lb_id: str, what: str) -> Json | None:
        """Wait until the balancer is out of PENDING_*; None once it is gone."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            lb = await self._get(lb_id)
            if lb is None or lb.get("provisioning_status") not in _PENDING:
                return lb
            if loop.time() >= deadline:
                raise TemporaryError(
                    f"{what} is still {lb['provisioning_status']} after {self.timeout_s:g} s"
                )
            await self._sleep(self.poll_interval_s)

    async def _pools(self, lb: Json) -> dict[str, str]:
        """The balancer's pools: name -> id."""
        pools, _ = await self.api.call(
            "GET", f"/lbaas/pools?loadbalancer_id={lb['id']}", "list pools"
        )
        return {str(p.get("name") or ""): str(p["id"]) for p in pools.get("pools", [])}

    async def _pool_members(self, pool_id: str) -> list[Json]:
        members, _ = await self.api.call("GET", f"/lbaas/pools/{pool_id}/members", "list members")
        return [dict(m) for m in members.get("members", [])]

    async def _all_members(self, lb: Json) -> list[tuple[str, Json]]:
        out: list[tuple[str, Json]] = []
        for name, pool_id in sorted((await self._pools(lb)).items()):
            out.extend((name, m) for m in await self._pool_members(pool_id))
        return out

    async def pool_names(self, cluster: str, key: str) -> set[str] | None:
        """The names of the pools the balancer has now; None when there is no balancer."""
        found = await self._find(cluster, key)
        return None if found is None else set(await self._pools(found))

    def _member_body(self, cluster: str, m: Member, subnet_id: str) -> Json:
        return {
            "name": m.key,
            "address": m.address,
            "protocol_port": m.port,
            "subnet_id": subnet_id,
            "tags": tags_for(cluster, f"member:{m.key}"),
        }

    async def ensure(self, request: LoadBalancerRequest, subnet_id: str) -> LoadBalancer:
        """The balancer with no members yet (`set_members` adds them), ACTIVE."""
        what = f"load balancer {request.name}"
        existing = await self._find(request.cluster, request.key)
        if existing is not None and existing.get("provisioning_status") == "ERROR":
            await self.delete(str(existing["id"]), what)
            existing = None
        if existing is None:
            pools: list[Json] = []
            for spec in request.pools:
                pool: Json = {
                    "name": spec.name,
                    "protocol": request.pool_protocol(spec),
                    "lb_algorithm": spec.algorithm,
                }
                if spec.health_monitor is not None:
                    hm = spec.health_monitor
                    monitor: Json = {
                        "type": hm.type,
                        "delay": hm.delay_s,
                        "timeout": hm.timeout_s,
                        "max_retries": hm.max_retries,
                    }
                    if hm.url_path:
                        monitor["url_path"] = hm.url_path
                    pool["healthmonitor"] = monitor
                pools.append(pool)
            body: Json = {
                "name": request.name,
                "vip_subnet_id": subnet_id,
                "tags": tags_for(request.cluster, request.key),
                "pools": pools,
                "listeners": [
                    {
                        "name": f"{request.name}-{ln.protocol.value.lower()}-{ln.port}",
                        "protocol": ln.protocol.value,
                        "protocol_port": ln.port,
                        "default_pool": {"name": ln.pool},
                    }
                    for ln in request.listeners
                ],
            }
            if request.vip_address is not None:
                body["vip_address"] = request.vip_address
            made, _ = await self.api.call(
                "POST", "/lbaas/loadbalancers", f"create {what}", body={"loadbalancer": body}
            )
            existing = dict(made["loadbalancer"])
        lb = await self._settle(str(existing["id"]), what)
        if lb is None:
            raise TemporaryError(f"{what} disappeared while being made")
        if lb.get("provisioning_status") == "ERROR":
            raise TemporaryError(f"{what} went to ERROR in Octavia")
        if await self._reconcile_listeners(request, lb):
            lb = await self._settle(str(lb["id"]), what)
            if lb is None:
                raise TemporaryError(f"{what} disappeared while its listeners changed")
        return _balancer(lb, await self._all_members(lb))

    async def _reconcile_listeners(self, request: LoadBalancerRequest, lb: Json) -> bool:
        """The balancer's listeners made what `request` says, in place (issue 26): one whose
        port and protocol are no longer wanted is deleted (first: a port freed may be taken
        again with another protocol), a missing one is made, one sending to another pool is
        pointed at the right one. The balancer is kept (its VIP too). A listener is known by
        its protocol and port, so a change retried after a crash finds what the first attempt
        did. Whether anything changed."""
        what = f"load balancer {request.name}"
        found, _ = await self.api.call(
            "GET", f"/lbaas/listeners?loadbalancer_id={lb['id']}", f"list listeners of {what}"
        )
        have = {
            (str(x.get("protocol")), int(x["protocol_port"])): dict(x)
            for x in found.get("listeners", [])
        }
        wanted = {(ln.protocol.value, ln.port): ln for ln in request.listeners}
        pools = await self._pools(lb)
        changed = False
        for key, x in sorted(have.items()):
            if key not in wanted:
                await self._change(
                    str(lb["id"]), "DELETE", f"/lbaas/listeners/{x['id']}", what, None
                )
                changed = True
        for key, ln in sorted(wanted.items()):
            pool_id = pools.get(ln.pool)
            if pool_id is None:
                raise PermanentError(f"{what} has no pool {ln.pool} for its listener {ln.port}")
            current = have.get(key)
            if current is None:
                body: Json = {
                    "name": f"{request.name}-{ln.protocol.value.lower()}-{ln.port}",
                    "protocol": ln.protocol.value,
                    "protocol_port": ln.port,
                    "loadbalancer_id": str(lb["id"]),
                    "default_pool_id": pool_id,
                }
                await self._change(str(lb["id"]), "POST", "/lbaas/listeners", what, body)
                changed = True
            elif current.get("default_pool_id") != pool_id:
                path = f"/lbaas/listeners/{current['id']}"
                await self._change(str(lb["id"]), "PUT", path, what, {"default_pool_id": pool_id})
                changed = True
        return changed

    async def _change(
        self, lb_id: str, method: str, path: str, what: str, listener: Json | None
    ) -> None:
        """One change of a balancer's listener, once the balancer is out of PENDING_* (Octavia
        refuses changes until then, 409 "immutable"), tried again while it is busy."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            if await self._settle(lb_id, what) is None:
                raise TemporaryError(f"{what} disappeared while its listeners changed")
            try:
                await self.api.call(
                    method,
                    path,
                    f"change the listeners of {what}",
                    body=None if listener is None else {"listener": listener},
                    missing_ok=method == "DELETE",
                )
                return
            except TemporaryError:
                if loop.time() >= deadline:
                    raise
                await self._sleep(self.poll_interval_s)

    async def set_members(
        self, cluster: str, key: str, members: list[Member], pool: str = POOL
    ) -> LoadBalancer:
        """Pool `pool` of the balancer becomes exactly `members` (one batch call)."""
        found = await self._find(cluster, key)
        if found is None:
            raise PermanentError(f"load balancer {key} of cluster {cluster} does not exist")
        what = f"load balancer {found.get('name')}"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            lb = await self._settle(str(found["id"]), what)
            if lb is None:
                raise PermanentError(f"{what} is gone")
            pool_id = (await self._pools(lb)).get(pool)
            if pool_id is None:
                raise PermanentError(f"{what} has no pool {pool}")
            current = await self._pool_members(pool_id)
            want = {(m.key, m.address, m.port) for m in members}
            have = {
                (str(m.get("name")), str(m["address"]), int(m["protocol_port"])) for m in current
            }
            if want == have:
                return _balancer(lb, await self._all_members(lb))
            subnet_id = str(lb["vip_subnet_id"])
            try:
                await self.api.call(
                    "PUT",
                    f"/lbaas/pools/{pool_id}/members",
                    f"set the members of {what}",
                    body={"members": [self._member_body(cluster, m, subnet_id) for m in members]},
                )
            except TemporaryError:
                # 409: it went PENDING_UPDATE under us (another change); settle and look again.
                if loop.time() >= deadline:
                    raise
                await self._sleep(self.poll_interval_s)

    async def state(self, cluster: str, key: str) -> LoadBalancer | None:
        """The balancer as it is now, with its members' health; None if there is none."""
        found = await self._find(cluster, key)
        if found is None:
            return None
        return _balancer(found, await self._all_members(found))

    async def delete(self, lb_id: str, what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        while True:
            lb = await self._settle(lb_id, what)
            if lb is None:
                return
            try:
                await self.api.call(
                    "DELETE",
                    f"/lbaas/loadbalancers/{lb_id}?cascade=true",
                    f"delete {what}",
                    missing_ok=True,
                )
            except TemporaryError:
                # Still provisioning (409 immutable): wait it out, never leave it behind.
                if loop.time() >= deadline:
                    raise
                await self._sleep(self.poll_interval_s)
                continue
            if await self._settle(lb_id, what) is None:
                return

    async def delete_all(self, cluster: str) -> None:
        for lb in await self._list([cluster_tag(cluster)]):
            await self.delete(str(lb["id"]), f"load balancer {lb.get('name')}")

    async def list_resources(self, cluster: str | None) -> list[NetResource]:
        tags = [cluster_tag(cluster)] if cluster else [TAG]
        return [
            NetResource(
                kind=NetKind.LOAD_BALANCER,
                id=str(lb["id"]),
                key=_tag_value(list(lb.get("tags") or []), "shoal-key:"),
                cluster=_tag_value(list(lb.get("tags") or []), "shoal-cluster:"),
                name=str(lb.get("name") or ""),
                status=str(lb.get("provisioning_status", "")),
            )
            for lb in await self._list(tags)
        ]

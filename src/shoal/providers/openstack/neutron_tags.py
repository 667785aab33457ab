"""Neutron resources found again after a crash (neutron.py's module docstring says how): listed by
Shoal's tags, or adopted by the cluster's mark in their description when an attempt died before
tagging them; made with that mark and then tagged; deleted by id, already gone being fine."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import quote

from shoal.providers.errors import PermanentError
from shoal.providers.openstack.netspec import NetKind
from shoal.providers.openstack.rest import Json, Rest

TAG = "shoal"
_KEY_MAX = 40
"""Longer keys are hashed so a tag stays within Neutron's and Octavia's tag length limits."""

# (collection path, JSON key of one, JSON key of a list, kind)
COLLECTIONS: dict[NetKind, tuple[str, str, str]] = {
    NetKind.NETWORK: ("/networks", "network", "networks"),
    NetKind.SUBNET: ("/subnets", "subnet", "subnets"),
    NetKind.ROUTER: ("/routers", "router", "routers"),
    NetKind.SECURITY_GROUP: ("/security-groups", "security_group", "security_groups"),
    NetKind.PORT: ("/ports", "port", "ports"),
    NetKind.FLOATING_IP: ("/floatingips", "floatingip", "floatingips"),
}


def cluster_tag(cluster: str) -> str:
    return f"shoal-cluster:{cluster}"


def key_tag(key: str) -> str:
    if len(key) > _KEY_MAX:
        key = "h-" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"shoal-key:{key}"


def node_tag(node: str) -> str:
    return f"shoal-node:{node}"


def tags_for(cluster: str, key: str, node: str | None = None) -> list[str]:
    tags = [TAG, cluster_tag(cluster), key_tag(key)]
    return tags if node is None else [*tags, node_tag(node)]


def tag_value(tags: list[str], prefix: str) -> str:
    for t in tags:
        if t.startswith(prefix):
            return t[len(prefix) :]
    return ""


@dataclass(frozen=True, slots=True)
class Wanted:
    """One resource to find by key or make: its kind, cluster and key, the body to create it
    with, how to say it, what finds it untagged (its name, a floating IP's port), its node."""

    kind: NetKind
    cluster: str
    key: str
    body: Json
    what: str
    match: dict[str, str] = field(default_factory=dict)
    node: str | None = None


class Tagged:
    def __init__(self, api: Rest) -> None:
        self.api = api

    async def list_tagged(self, kind: NetKind, tags: list[str]) -> list[Json]:
        path, _, many = COLLECTIONS[kind]
        query = quote(",".join(tags), safe=":,")
        found, _ = await self.api.call("GET", f"{path}?tags={query}", f"list {many}")
        return [dict(r) for r in found.get(many, [])]

    async def find(
        self,
        kind: NetKind,
        cluster: str,
        key: str,
        match: dict[str, str],
        node: str | None = None,
    ) -> Json | None:
        found = await self.list_tagged(kind, [cluster_tag(cluster), key_tag(key)])
        if found:
            return found[0]
        if not match:
            return None
        # Made by an attempt that died before tagging it: its description and `match` (its
        # name, or a floating IP's port) find it; tag it now.
        path, _, many = COLLECTIONS[kind]
        query = "&".join(
            f"{k}={quote(v)}" for k, v in {"description": cluster_tag(cluster), **match}.items()
        )
        untagged, _ = await self.api.call("GET", f"{path}?{query}", f"find {many}")
        for r in untagged.get(many, []):
            if not r.get("tags"):
                await self._tag(kind, str(r["id"]), cluster, key, node)
                return dict(r)
        return None

    async def _tag(
        self, kind: NetKind, resource_id: str, cluster: str, key: str, node: str | None = None
    ) -> None:
        path, _, _ = COLLECTIONS[kind]
        await self.api.call(
            "PUT",
            f"{path}/{resource_id}/tags",
            f"tag {kind.value} {resource_id}",
            body={"tags": tags_for(cluster, key, node)},
        )

    async def ensure(self, w: Wanted) -> Json:
        """Find by key or make: created with the cluster's mark in its description (the one
        field every kind has and Neutron filters on), then tagged (Neutron takes tags in the
        create call itself for ports only, and only with an ML2 extension driver)."""
        existing = await self.find(w.kind, w.cluster, w.key, w.match, w.node)
        if existing is not None:
            return existing
        path, one, _ = COLLECTIONS[w.kind]
        full = {**w.body, "description": cluster_tag(w.cluster)}
        tags = tags_for(w.cluster, w.key, w.node)
        if w.kind is NetKind.PORT:
            full["tags"] = tags
        made, _ = await self.api.call("POST", path, f"create {w.what}", body={one: full})
        resource = dict(made[one])
        # Ports take tags at create only where ML2's tag_ports_during_bulk_creation driver runs;
        # the answer says whether it did.
        if not set(tags) <= set(resource.get("tags") or []):
            await self._tag(w.kind, str(resource["id"]), w.cluster, w.key, w.node)
        return resource

    async def delete(self, kind: NetKind, resource_id: str, what: str) -> None:
        path, _, _ = COLLECTIONS[kind]
        await self.api.call("DELETE", f"{path}/{resource_id}", f"delete {what}", missing_ok=True)

    async def id_by_key(self, kind: NetKind, cluster: str, key: str, what: str) -> Json:
        found = await self.find(kind, cluster, key, {})
        if found is None:
            raise PermanentError(f"{what} of cluster {cluster} does not exist (yet)")
        return found

    async def owned(self, kind: NetKind, cluster: str) -> list[Json]:
        """The cluster's resources of `kind`: tagged, or marked in their description only (an
        attempt died between creating and tagging)."""
        found = {str(r["id"]): r for r in await self.list_tagged(kind, [cluster_tag(cluster)])}
        path, _, many = COLLECTIONS[kind]
        marked, _ = await self.api.call(
            "GET", f"{path}?description={quote(cluster_tag(cluster))}", f"list {many}"
        )
        for r in marked.get(many, []):
            found.setdefault(str(r["id"]), dict(r))
        return list(found.values())

"""Health probes: is this node well, by the provider's word, a TCP connect, or an HTTP answer?

A probe returns None when the node is healthy and a short reason when it is not; it never
raises for a sick node, and it is bounded by the policy's timeout.
"""

from __future__ import annotations

import asyncio

import httpx

from shoal.model.enums import NodeKind
from shoal.model.policies import CheckKind, HealthPolicy
from shoal.providers.base import Provider, ResourceState
from shoal.providers.errors import ProviderError
from shoal.store.records import NodeRecord


def _endpoint(node: NodeRecord, policy: HealthPolicy) -> tuple[str, int] | None:
    if not node.address:
        return None
    host, sep, port = node.address.rpartition(":")
    if not sep:
        host, port = node.address, ""
    chosen = policy.port or (int(port) if port.isdigit() else None)
    return (host, chosen) if chosen else None


async def probe(
    node: NodeRecord, policy: HealthPolicy, provider: Provider, client: httpx.AsyncClient
) -> str | None:
    """None if `node` is healthy under `policy`, else why not."""
    try:
        return await asyncio.wait_for(_probe(node, policy, provider, client), policy.timeout_s)
    except TimeoutError:
        return f"{policy.check} check timed out after {policy.timeout_s:g} s"


async def _probe(
    node: NodeRecord, policy: HealthPolicy, provider: Provider, client: httpx.AsyncClient
) -> str | None:
    if policy.check is CheckKind.PROVIDER or node.kind is NodeKind.VOLUME:
        return await provider_state(node, provider)
    where = _endpoint(node, policy)
    if where is None:
        return "the node has no address to check"
    host, port = where
    if policy.check is CheckKind.TCP:
        try:
            _, writer = await asyncio.open_connection(host, port)
        except OSError as e:
            return f"tcp {host}:{port}: {e.strerror or e}"
        writer.close()
        return None
    url = f"http://{host}:{port}{policy.path}"
    try:
        r = await client.get(url, timeout=policy.timeout_s)
    except httpx.HTTPError as e:
        return f"GET {url}: {type(e).__name__}"
    if r.status_code not in policy.expected_codes:
        return f"GET {url} answered {r.status_code}"
    return None


async def provider_state(node: NodeRecord, provider: Provider) -> str | None:
    if node.provider_id is None:
        return "the node has no provider resource"
    try:
        res = await provider.get(node.kind, node.provider_id)
    except ProviderError as e:
        return f"provider: {e}"
    if res.state is ResourceState.ACTIVE:
        return None
    return f"provider reports {res.state}"

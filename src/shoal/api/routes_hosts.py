"""Hosts of the provider, and (admin) failing and recovering them on purpose.

Failing a host is how host loss is shown end to end: on `local` it kills that host's node
processes; the manager then finds the nodes gone and replaces them on other hosts. A provider
whose hosts cannot be failed on purpose (openstack) still lists the hosts it offers.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.model.inventory import Host
from shoal.model.names import natural_key
from shoal.model.nodes import Demand
from shoal.providers.base import HostAdmin
from shoal.providers.errors import ProviderError
from shoal.runtime import Runtime
from shoal.service.errors import Conflict, Forbidden, NotFound
from shoal.store import nodes as node_repo
from shoal.store.records import Principal

router = APIRouter(
    prefix="/v1/hosts", tags=["hosts"], responses=schemas.ERRORS, route_class=schemas.ExactRoute
)


def _require_admin(who: Principal) -> None:
    if not who.is_admin:
        raise Forbidden("only an admin manages hosts")


def _admin(request: Request, who: Principal) -> HostAdmin:
    _require_admin(who)
    provider = runtime_of(request).provider
    if not isinstance(provider, HostAdmin):
        raise Conflict(f"the {provider.name} provider does not manage its hosts")
    return provider


@router.get("", response_model=schemas.HostList)
async def list_hosts(request: Request, who: Caller) -> dict[str, Any]:
    _require_admin(who)
    rt = runtime_of(request)
    if isinstance(rt.provider, HostAdmin):
        hosts: list[dict[str, Any]] = [
            {"name": h.name, "zone": h.zone, "failed": h.failed, "resources": h.resources}
            for h in await rt.provider.hosts()
        ]
    else:
        # A cloud Shoal cannot fail hosts of (openstack): the hosts its inventory offers.
        hosts = [
            {"name": h.name, "zone": h.zone, "failed": False, "resources": None}
            for h in rt.inventory.hosts
        ]
    offered = {h.name: _capacity(h) for h in rt.inventory.hosts}
    used = await run_in_threadpool(_used, rt)
    for h in hosts:
        name = str(h["name"])
        h["capacity"] = offered.get(name)
        h["used"] = _capacity(used.get(name, Demand()))
    return {"hosts": hosts}


def _used(rt: Runtime) -> dict[str, Demand]:
    with rt.db.reading() as conn:
        return node_repo.used_capacity(conn)


def _capacity(c: Demand | Host) -> dict[str, int]:
    """A host's size or what is held on it, in the answer's shape (`HostCapacity`)."""
    return {"vcpus": c.vcpus, "ram_mb": c.ram_mb, "disk_gb": c.disk_gb, "volume_gb": c.volume_gb}


async def _known(admin: HostAdmin, host: str) -> None:
    if host not in {h.name for h in await admin.hosts()}:
        raise NotFound(f"no host {host!r}")


@router.post("/{host}/fail", response_model=schemas.HostState)
async def fail_host(host: str, request: Request, who: Caller) -> dict[str, Any]:
    admin = _admin(request, who)
    await _known(admin, host)
    rt = runtime_of(request)
    named = await run_in_threadpool(_named_on, rt, host)  # before: the nodes then move
    try:
        lost = await admin.fail_host(host)
    except ProviderError as e:
        raise Conflict(str(e)) from None
    rt.inventory = await rt.engine.refresh_inventory()
    nodes = sorted((named[r] for r in lost if r in named), key=natural_key)
    return {"host": host, "failed": True, "resources": lost, "nodes": nodes}


def _named_on(rt: Runtime, host: str) -> dict[str, str]:
    with rt.db.reading() as conn:
        return node_repo.named_on_host(conn, host)


@router.post("/{host}/recover", response_model=schemas.HostState)
async def recover_host(host: str, request: Request, who: Caller) -> dict[str, Any]:
    admin = _admin(request, who)
    await _known(admin, host)
    await admin.recover_host(host)
    rt = runtime_of(request)
    rt.inventory = await rt.engine.refresh_inventory()
    return {"host": host, "failed": False}

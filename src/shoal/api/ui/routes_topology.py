"""GET /ui/api/topology: the caller's nodes on their hosts, and (admin) every host's capacity.

Nodes come from the service's queries, scoped to the caller like `GET /v1/nodes`; a tenant sees
only the hosts its own nodes sit on, with no capacity or failure state (those describe other
projects too). An admin sees every host the provider has, failed ones included.

Nodes are counted per host and status in SQL first; only when there are at most
`topology_max_drawn` (a setting, 2,000) are they loaded and drawn one by one (issue 23: a
100,000-node cluster is counts per host). Counts over more than `topology_max_hosts` hosts (1,000)
are summed per zone: 12,500 hosts listed were 2.8 MB.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller, runtime_of
from shoal.api.ui.topology import Capacity, HostFacts, build, capacity_of
from shoal.providers.base import HostAdmin
from shoal.runtime import Runtime
from shoal.store import nodes as node_repo
from shoal.store.records import Principal

router = APIRouter(prefix="/ui/api")


async def _host_facts(rt: Runtime) -> list[HostFacts]:
    inventory = rt.engine.inventory_now()
    sizes = {h.name: Capacity(h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb) for h in inventory.hosts}
    with rt.db.reading() as conn:
        used = node_repo.used_capacity(conn)
    if isinstance(rt.provider, HostAdmin):
        listed = [(h.name, h.zone, h.failed) for h in await rt.provider.hosts()]
    else:
        listed = [(h.name, h.zone, False) for h in inventory.hosts]
    return [
        HostFacts(
            name=name,
            zone=zone,
            failed=failed,
            capacity=sizes.get(name),
            used=capacity_of(used[name]) if name in used else Capacity(0, 0, 0, 0),
        )
        for name, zone, failed in listed
    ]


def _names(rt: Runtime, who: Principal) -> dict[str, str]:
    return {c.id: c.name for c in rt.queries.clusters(who)}


@router.get("/topology")
async def topology(request: Request, who: Caller, cluster: str | None = None) -> JSONResponse:
    """Zones -> hosts -> nodes; with `cluster`, only that cluster's nodes (hosts stay)."""
    rt = runtime_of(request)
    drawn_max = rt.settings.topology_max_drawn
    found = await run_in_threadpool(rt.queries.topology_nodes, who, cluster, drawn_max)
    nodes = None if found.nodes is None else [n.model_dump() for n in found.nodes]
    names = await run_in_threadpool(_names, rt, who)
    hosts = await _host_facts(rt) if who.is_admin else []
    view = build(
        admin=who.is_admin,
        hosts=hosts,
        nodes=nodes,
        cluster_names=names,
        counts=found.counts,
        drawn_max=drawn_max,
        hosts_max=rt.settings.topology_max_hosts,
    )
    # Plain JSON values already: skip FastAPI's encoder, which costs as much as the build.
    return JSONResponse(view.as_dict())

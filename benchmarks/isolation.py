"""What a hostile local node reaches, and what a node's own network costs at start (issue 39).

    .venv/bin/python benchmarks/isolation.py [--runs 10]

Part 1, probes: a real `shoal server` (local provider, Heat's agents) serves two tenants. Tenant
B has a cluster (`victim`); tenant A has a cluster with a balancer (`neighbour`) and the hostile
one (`probe`: two servers running isolation_probes.PROBE_SCRIPT). One JSON line per probe:
`probe`, `target`, `reached` (true or false), `expected`; the signal counts as reached when the
deployment completed (its agents POSTed it). Then `{"summary": "probes", "failing": N, ...}`.

Part 2, cost: servers created one after another by two local providers in one process, one
giving each node its own network (isolation = "netns") and one not ("off"), both sandboxed,
interleaved, `--runs` each: the median time of a create (from the call to a node answering on
its address), with the first and last runs (the nodes' filter is rendered whole, so its cost
grows with the nodes of the home), the CPU of this process and its children, and the load.

Needs root (namespaces), bubblewrap, nftables and Heat's agents (`make venv`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from _servers import Server, free_port, server_env
from isolation_probes import (
    PROBE_CLUSTER,
    failing,
    plain_document,
    probe_document,
    probes,
    results,
)
from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, default_inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import ServerRequest
from shoal.providers.local import LocalProvider
from shoal.providers.local.balancer import Balancer
from shoal.providers.local.options import LocalOptions

TIMEOUT_S = 300.0


def emit(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- part 1: probes --------------------------------------------------------------------------


def until(check: Any, what: str, timeout_s: float = TIMEOUT_S) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise RuntimeError(f"gave up waiting for {what}")


def active(client: httpx.Client, name: str) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        r = client.get(f"/v1/clusters/{name}")
        body = r.json().get("cluster") if r.status_code == 200 else None
        return body if body and body.get("status") == "ACTIVE" else None

    found: dict[str, Any] = until(ready, f"cluster {name} ACTIVE")
    return found


def address_of(client: httpx.Client, cluster: str) -> str:
    nodes = client.get("/v1/nodes", params={"cluster": cluster}).json()["nodes"]
    return str(nodes[0]["address"]).rsplit(":", 1)[0]


def _serving_at(client: httpx.Client, cluster: str) -> str | None:
    """The address the cluster's first balancer serves at (its VIP here)."""
    nets = client.get(f"/v1/clusters/{cluster}/networks").json()["networking"]
    found = [lb["serving_at"] for lb in nets.get("load_balancers", []) if lb["serving_at"]]
    return str(found[0]) if found else None


def tenant(admin: httpx.Client, name: str, url: str) -> httpx.Client:
    r = admin.post("/v1/projects", json={"name": name})
    r.raise_for_status()
    token = r.json()["token"]
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def run_probes(base: Path) -> int:
    home = base / "probes"
    agent_port, node_port = free_port(), free_port()
    env = server_env(
        home,
        SHOAL_PROVIDER="local",
        SHOAL_PROVIDER_OPTIONS=json.dumps({"agent_poll_s": 1.0, "port": node_port}),
        SHOAL_AGENT_PORT=str(agent_port),
    )
    server = Server(home, env)
    server.start()
    token = (home / "admin-token").read_text().strip()
    admin = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    a, b = tenant(admin, "tenant-a", server.url), tenant(admin, "tenant-b", server.url)
    try:
        return _probe(server, (a, b), agent_port, node_port)
    finally:
        for client, names in ((a, ("probe", "neighbour")), (b, ("victim",))):
            for name in names:
                client.delete(f"/v1/clusters/{name}")
        until(lambda: not admin.get("/v1/nodes").json()["nodes"], "the clusters deleted")
        server.stop()


def _probe(
    server: Server, tenants: tuple[httpx.Client, httpx.Client], agent_port: int, node_port: int
) -> int:
    a, b = tenants
    b.post("/v1/clusters", content=plain_document("victim", node_port)).raise_for_status()
    neighbour_doc = plain_document("neighbour", node_port, balancer=True)
    a.post("/v1/clusters", content=neighbour_doc).raise_for_status()
    victim, neighbour = active(b, "victim"), active(a, "neighbour")
    vip = until(lambda: _serving_at(a, "neighbour"), "the neighbour's balancer")
    directory = server.home / "local" / "networking" / str(neighbour["id"])
    listed = probes(
        node_port=node_port,
        api_port=server.port,
        agent_port=agent_port,
        victim=address_of(b, str(victim["id"])),
        neighbour=address_of(a, str(neighbour["id"])),
        vip=vip,
        stats_socket=Balancer(directory, "front").socket,
    )
    a.post("/v1/clusters", content=probe_document(listed)).raise_for_status()

    def done() -> list[dict[str, Any]] | None:
        found = a.get(f"/v1/clusters/{PROBE_CLUSTER}/deployments").json()["deployments"]
        ended = [d for d in found if d["status"] in ("COMPLETE", "FAILED")]
        return ended if len(ended) == 2 else None

    runs = until(done, "the probes' deployments")
    failed = 0
    for run in runs:
        log = a.get(f"/v1/nodes/{run['node_id']}/deployments/{run['deployment']}")
        found = results(log.json()["deployment"]["stdout"])
        found.append(
            {
                "probe": "signal",
                "target": "its run's signal URL",
                "reached": run["status"] == "COMPLETE",
                "expected": True,
            }
        )
        for r in found:
            emit({**r, "node": run["node"]})
        failed += len(failing(found)) + (0 if found else 1)
    emit({"summary": "probes", "failing": failed, "nodes": len(runs), "load": load()})
    return failed


# -- part 2: the cost of a node's own network at start -----------------------------------------


def request(key: str, host: str, zone: str) -> ServerRequest:
    profile = ServerProfile(CLASSIC_FLAVORS[0], CIRROS)
    return ServerRequest(key=key, name=key, cluster="bench", host=host, zone=zone, profile=profile)


async def start_cost(base: Path, runs: int) -> None:
    providers = {
        mode: LocalProvider(
            base / f"cost-{mode}" / "local",
            default_inventory(),
            LocalOptions(port=free_port(), isolation=mode, boot_timeout_s=60.0),
        )
        for mode in ("netns", "off")
    }
    times: dict[str, list[float]] = {mode: [] for mode in providers}
    cpu: dict[str, float] = dict.fromkeys(providers, 0.0)
    hosts = [(h.name, h.zone) for h in default_inventory().hosts]
    try:
        for i in range(runs):
            for mode, provider in providers.items():
                before = _cpu()
                started = time.perf_counter()
                host, zone = hosts[i % len(hosts)]
                await provider.create_server(request(f"{mode}-{i}", host, zone))
                times[mode].append(time.perf_counter() - started)
                cpu[mode] += _cpu() - before
    finally:
        for provider in providers.values():
            await provider.purge()
    for mode, seen in times.items():
        emit(
            {
                "bench": "node_start",
                "isolation": mode,
                "runs": runs,
                "median_s": round(statistics.median(seen), 4),
                "first_s": round(seen[0], 4),
                "last_s": round(seen[-1], 4),
                "cpu_s_per_start": round(cpu[mode] / runs, 4),
                "load": load(),
            }
        )
    extra = statistics.median(times["netns"]) - statistics.median(times["off"])
    emit({"bench": "node_start_cost", "isolation_extra_median_s": round(extra, 4)})


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-probes", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="shoal-isolation-") as tmp:
        base = Path(tmp)
        failed = 0 if args.skip_probes else run_probes(base)
        asyncio.run(start_cost(base, args.runs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Senlin import benchmark: 100 clusters x 10 nodes, from Senlin's database into Shoal.

The Senlin rows are written by Senlin 16's own DB API (`senlin.db.api`, in Senlin's cached venv,
on a fresh MariaDB database synced by `senlin-manage db_sync`: tests/senlin_import/harness.py),
each node naming a server that exists in Shoal's simulated cloud (in memory). Then the import
runs embedded (store, provider, service in-process, no HTTP) through a provider wrapper that
counts every call: `cloud_writes` counts creates, deletes, attaches, reboots and rebuilds
(must be 0), `cloud_reads` the reads. A second run shows idempotence (`rerun_changed`: clusters
it imported again; must be 0).

Prints one JSON line: scenario, clusters, nodes, seconds (the import), cloud_writes,
cloud_reads, nodes_adopted, rerun_seconds, rerun_changed, seed_seconds (writing Senlin's rows),
database. Needs MariaDB at 127.0.0.1:3306 (root, no password).
Run: `python benchmarks/senlin_import.py [--clusters 100] [--nodes 10] [--database sqlite]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.databases import database_url  # noqa: E402
from tests.senlin_import.harness import fresh_senlin_db  # noqa: E402
from tests.senlin_import.scenario import NOVA, PROJECT, USER, new_id  # noqa: E402

from shoal.model.enums import NodeKind  # noqa: E402
from shoal.model.inventory import Inventory  # noqa: E402
from shoal.model.profile import ServerProfile  # noqa: E402
from shoal.providers.base import Provider, Resource, ServerRequest  # noqa: E402
from shoal.runtime import Runtime  # noqa: E402
from shoal.service.senlin_import import SenlinImport  # noqa: E402
from shoal.settings import Settings  # noqa: E402

WRITES = ("create_server", "create_volume", "attach_volume", "delete", "reboot", "rebuild")


class Counting:
    """A provider that counts the calls made through it, writes and reads apart."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.writes = 0
        self.reads = 0

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self.inner, attr)
        if attr in WRITES:
            self.writes += 1
        return value

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        self.reads += 1
        return await self.inner.get(kind, resource_id)

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        self.reads += 1
        return await self.inner.list_resources(cluster)


async def seed(rt: Runtime, work: Path, clusters: int, nodes: int) -> tuple[Any, float]:
    """Servers in the cloud, then Senlin's rows naming them; the Senlin db and the seconds."""
    start = time.perf_counter()
    senlin = fresh_senlin_db(work)
    inv: Inventory = rt.inventory
    profile = ServerProfile(inv.flavor("m1.tiny"), inv.image("cirros"))
    hosts = list(inv.hosts)
    pid = new_id()
    senlin.call(
        "profile_create",
        {
            "id": pid,
            "name": "nova",
            "type": "os.nova.server-1.0",
            "spec": NOVA,
            "user": USER,
            "project": PROJECT,
            "meta_data": {},
            "context": {},
        },
    )
    k = 0
    for c in range(clusters):
        cid = new_id()
        senlin.call(
            "cluster_create",
            {
                "id": cid,
                "name": f"c{c:03d}",
                "profile_id": pid,
                "user": USER,
                "project": PROJECT,
                "min_size": 1,
                "max_size": 2 * nodes,
                "desired_capacity": nodes,
                "next_index": nodes + 1,
                "timeout": 3600,
                "status": "ACTIVE",
                "status_reason": "",
                "meta_data": {"n": str(c)},
                "data": {},
                "config": {},
                "dependents": {},
            },
        )
        for i in range(1, nodes + 1):
            host = hosts[k % len(hosts)]
            k += 1
            nid = new_id()
            made = await rt.provider.create_server(
                ServerRequest(nid, nid, "senlin", host.name, host.zone, profile)
            )
            senlin.call(
                "node_create",
                {
                    "id": nid,
                    "name": f"c{c:03d}-{i:03d}",
                    "physical_id": made.id,
                    "cluster_id": cid,
                    "profile_id": pid,
                    "user": USER,
                    "project": PROJECT,
                    "index": i,
                    "role": "",
                    "status": "ACTIVE",
                    "status_reason": "",
                    "meta_data": {},
                    "data": {},
                    "dependents": {},
                },
            )
    senlin.flush()
    return senlin, time.perf_counter() - start


async def run(clusters: int, nodes: int, backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with database_url(backend, work) as url:
            settings = Settings(
                home=work / "home",
                database_url=url,
                provider="sim",
                provider_options={
                    "state_path": "memory",
                    "hosts": max(8, clusters * nodes // 20),
                    "zones": 2,
                },
                manage=False,
            )
            rt = await Runtime.open(settings)
            senlin = None
            try:
                senlin, seed_s = await seed(rt, work, clusters, nodes)
                counting = Counting(rt.provider)
                importer = SenlinImport(
                    rt.db,
                    counting,  # type: ignore[arg-type]
                    rt.service,
                    rt.engine.inventory_now,
                    rt.clock,
                )
                start = time.perf_counter()
                report = await importer.run(senlin.url, None, dry_run=False)
                seconds = time.perf_counter() - start
                start = time.perf_counter()
                again = await importer.run(senlin.url, None, dry_run=False)
                rerun_s = time.perf_counter() - start
            finally:
                if senlin is not None:
                    senlin.drop()
                await rt.close()
    summary = report.counts
    return {
        "scenario": f"senlin-import-{clusters}x{nodes}",
        "clusters": summary["imported"],
        "nodes": summary["nodes_adopted"],
        "seconds": round(seconds, 3),
        "cloud_writes": counting.writes,
        "cloud_reads": counting.reads,
        "refused": summary["refused"],
        "rerun_seconds": round(rerun_s, 3),
        "rerun_changed": again.counts["imported"],
        "seed_seconds": round(seed_s, 1),
        "database": backend,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument("--nodes", type=int, default=10)
    p.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    a = p.parse_args()
    print(json.dumps(asyncio.run(run(a.clusters, a.nodes, a.database))), flush=True)


if __name__ == "__main__":
    main()

"""Host-failure bookkeeping of the `sim` provider: failing half the hosts of 5,000 resources.

Moved here from a test that asserted on wall-clock time (tests never do): 5,000 tiny servers
on 20 hosts, then 10 hosts failed at once; timed are the failures (`fail_s`) and the listing
that reads half the resources MISSING (`list_s`). State in memory and in SQLite. Target: fail
under 0.5 s and list under 1 s on an idle machine. Prints one JSON line per store.
Run: `python benchmarks/sim_hosts.py`.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS
from shoal.model.inventory import Host, Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import ResourceState, ServerRequest
from shoal.providers.sim import SimProvider

SERVERS, HOSTS, FAILED = 5000, 20, 10


def inventory() -> Inventory:
    hosts = tuple(
        Host(f"h{i}", "az1", vcpus=250, ram_mb=250 * 8192, disk_gb=250 * 200, volume_gb=100)
        for i in range(1, HOSTS + 1)
    )
    return Inventory(hosts=hosts, flavors=CLASSIC_FLAVORS, images=(CIRROS,))


def request(i: int) -> ServerRequest:
    return ServerRequest(
        key=f"n{i}",
        name=f"n{i}",
        cluster="c1",
        host=f"h{i % HOSTS + 1}",
        zone="az1",
        profile=ServerProfile(CLASSIC_FLAVORS[0], CIRROS),
    )


async def scenario(stored: str, state_path: Path | None) -> dict[str, object]:
    sim = SimProvider(inventory(), state_path=state_path)
    try:
        await asyncio.gather(*(sim.create_server(request(i)) for i in range(SERVERS)))
        failing = [f"h{i}" for i in range(1, FAILED + 1)]
        started = time.perf_counter()
        lost = await asyncio.gather(*(sim.fail_host(h) for h in failing))
        fail_s = time.perf_counter() - started
        started = time.perf_counter()
        states = [r.state for r in await sim.list_resources("c1")]
        list_s = time.perf_counter() - started
    finally:
        await sim.close()
    return {
        "scenario": f"sim-fail-{FAILED}-of-{HOSTS}-hosts",
        "store": stored,
        "resources": SERVERS,
        "lost": sum(len(ids) for ids in lost),
        "missing": states.count(ResourceState.MISSING),
        "fail_s": round(fail_s, 4),
        "list_s": round(list_s, 4),
        "targets_met": fail_s < 0.5 and list_s < 1.0,
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for stored, path in (("memory", None), ("sqlite", Path(tmp) / "sim.db")):
            print(json.dumps(asyncio.run(scenario(stored, path))), flush=True)


if __name__ == "__main__":
    main()

"""Networks, security groups and load balancers, measured for real (issue 26).

One JSON line per scenario (`scenario` plus the scenario's fields):

- `local-lb-member-change` (`median_s`, `max_s`, `runs`): a real HAProxy on its loopback
  address in front of real TCP servers; a member is added or removed (alternately, 10 times)
  through the local provider's `NetworkDriver`, and the time is taken from the change until
  the balancer answers with exactly the new set of members (asked through the VIP). Measured at
  the driver: through a whole `shoal server`, the manager's tick (1 s by default) comes first.
- `local-sg-enforced` (`allowed_ok`, `blocked_refused`): a security group whose rule lets one
  node group in; a real TCP connect from a member of that group (its source address) is
  answered, one from a server outside it is refused by the nftables table.

- `openstack-create-delete` (`seconds`, `orphans`, and `create_s`, `delete_s`, `resources`,
  `duplicates`, `chaos_kills`): a real Neutron 29 and Octavia 19 (tests/netpeers) are started;
  one cluster's network side (2 networks and subnets, a router, 2 security groups, 3 ports, a
  floating IP, a load balancer with 3 members: tests/netpeers/drive.py) is made and deleted
  through the openstack provider, `seconds` = create + delete. Then the same again with
  `kill -9` of the process mid-create (twice) and mid-delete (once), each followed by a rerun;
  `orphans` = what the services still hold for both clusters afterwards (plus any resource
  left without its key), `duplicates` = resources sharing one key after the chaos create.

Scenarios are in `SCENARIOS`: a name and an async function returning the scenario's fields.

Run: `python benchmarks/networks.py [--scenario NAME ...] [--runs 10]` (needs root for nft,
and Debian's `nftables` and `haproxy`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.networks.support import (
    Serving,
    addresses,
    cluster,
    connect,
    free_port,
    http_get,
    networking,
)

from shoal.providers.local.networking import LocalNetworking

HEAD = """
name: bench
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 8}
  - {name: db, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
  - {name: other, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
networks:
  - {name: app, cidr: 10.10.0.0/24}
"""

Scenario = Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]


async def _serving(vip: str, port: int, wanted: set[str], deadline_s: float = 60.0) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        seen: set[str] = set()
        for _ in range(4 * max(1, len(wanted))):
            body = await http_get(vip, port, timeout=2.0)
            if body is not None:
                seen.add(body)
        if seen == wanted:
            return True
        await asyncio.sleep(0.01)
    return False


async def lb_member_change(args: argparse.Namespace) -> dict[str, Any]:
    addrs = addresses(4)
    port = free_port(addrs[0])
    listen = free_port("127.0.0.1")
    spec = networking(
        HEAD
        + f"""
load_balancers:
  - name: front
    network: app
    listeners: [{{port: {listen}, protocol: HTTP, pool: web}}]
    pools:
      - {{name: web, members: web, port: {port}, protocol: HTTP,
          health: {{type: HTTP, delay: 1, timeout: 1}}}}
"""
    )
    servers = [await Serving(f"web-{i + 1}", a, port).start() for i, a in enumerate(addrs)]
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="shoal-bench-net-") as home:
        net = LocalNetworking(Path(home))
        cid = uuid.uuid4().hex
        members = [("web-1", "web", addrs[0]), ("web-2", "web", addrs[1])]
        try:
            await net.apply(cluster(spec, members, cid))
            vip = net.vips(cluster(spec, members, cid))["front"]
            if not await _serving(vip, listen, {"web-1", "web-2"}):
                raise SystemExit("the balancer never served its first members")
            for run in range(args.runs):
                if run % 2 == 0:  # add the next member
                    members = [*members, (f"web-{len(members) + 1}", "web", addrs[len(members)])]
                else:  # and remove it again
                    members = [m for m in members if m != members[-1]]
                wanted = {m[0] for m in members}
                start = time.monotonic()
                await net.apply(cluster(spec, members, cid))
                if not await _serving(vip, listen, wanted):
                    raise SystemExit(f"run {run}: the balancer never served {sorted(wanted)}")
                times.append(time.monotonic() - start)
        finally:
            await net.remove(cid)
            for s in servers:
                await s.stop()
    return {
        "median_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
        "runs": len(times),
    }


async def sg_enforced(args: argparse.Namespace) -> dict[str, Any]:
    web, db, other = addresses(3)
    port = free_port(db)
    spec = networking(
        HEAD
        + f"""
security_groups:
  - name: db
    rules: [{{protocol: tcp, ports: {port}, from: {{member: web}}}}]
ports:
  - {{server: db, network: app, security_groups: [db]}}
"""
    )
    server = await Serving("db-1", db, port).start()
    with tempfile.TemporaryDirectory(prefix="shoal-bench-net-") as home:
        net = LocalNetworking(Path(home))
        cid = uuid.uuid4().hex
        servers = [("web-1", "web", web), ("db-1", "db", db), ("other-1", "other", other)]
        try:
            await net.apply(cluster(spec, servers, cid))
            allowed = await connect(web, db, port)
            blocked = await connect(other, db, port)
        finally:
            await net.remove(cid)
            await server.stop()
    return {
        "allowed_ok": allowed == "ok:db-1",
        "blocked_refused": blocked == "refused",
        "blocked_answer": blocked,
    }


async def openstack_create_delete(args: argparse.Namespace) -> dict[str, Any]:
    from functools import partial

    from tests.netpeers import drive
    from tests.netpeers.books import books
    from tests.netpeers.chaos import at_least, drive_process, finish, kill_when
    from tests.netpeers.peers import net_cloud

    from shoal.providers.openstack.provider import OpenStackProvider
    from shoal.providers.registry import make_provider

    with tempfile.TemporaryDirectory() as tmp, net_cloud(Path(tmp)) as cloud:
        n_url, o_url = cloud.neutron.url, cloud.octavia.url
        p = make_provider("openstack", home=Path(tmp), options=cloud.provider_options())
        assert isinstance(p, OpenStackProvider)
        clean = uuid.uuid4().hex[:12]
        try:
            t0 = time.perf_counter()
            await drive.create(p, clean)
            t1 = time.perf_counter()
            made = books(clean, n_url, o_url)
            await p.delete_networks(clean)
            t2 = time.perf_counter()
        finally:
            await p.close()

        chaos = uuid.uuid4().hex[:12]

        def count() -> int:
            return books(chaos, n_url, o_url).resources

        kills = 0
        for n in (1, 8):
            kills += await asyncio.to_thread(
                kill_when, drive_process("create", chaos, cloud), partial(at_least, count, n)
            )
        await asyncio.to_thread(finish, drive_process("create", chaos, cloud))
        after_create = books(chaos, n_url, o_url)
        complete = after_create.resources
        kills += await asyncio.to_thread(
            kill_when,
            drive_process("delete", chaos, cloud),
            lambda: 0 < count() < complete,
        )
        await asyncio.to_thread(finish, drive_process("delete", chaos, cloud))
        left = [books(c, n_url, o_url) for c in (clean, chaos)]
    return {
        "seconds": round(t2 - t0, 2),
        "create_s": round(t1 - t0, 2),
        "delete_s": round(t2 - t1, 2),
        "resources": made.resources,
        "by_kind": made.by_kind,
        "orphans": sum(b.resources for b in left) + after_create.unkeyed,
        "duplicates": after_create.duplicates,
        "chaos_kills": kills,
    }


SCENARIOS: dict[str, Scenario] = {
    "local-lb-member-change": lb_member_change,
    "local-sg-enforced": sg_enforced,
    "openstack-create-delete": openstack_create_delete,
}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    for name in args.scenario or list(SCENARIOS):
        result = await SCENARIOS[name](args)
        print(json.dumps({"scenario": name, **result}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())

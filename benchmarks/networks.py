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

More scenarios (e.g. `openstack-create-delete` through real Neutron and Octavia) are added to
`SCENARIOS`: a name and an async function returning the scenario's fields.

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


SCENARIOS: dict[str, Scenario] = {
    "local-lb-member-change": lb_member_change,
    "local-sg-enforced": sg_enforced,
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

"""Side by side on one real Nova: 200 servers in 20 anti-affinity groups of 10, three ways.

Each mode gets a fresh Nova 34 (functional-test harness, fake-virt computes: 100 hosts in 3
zones, 16 vCPUs each; see tests/nova/cloud.py) and boots 200 m1.tiny servers:

- `nova-parallel`: Nova alone, 200 single-server requests all in flight at once, each with the
  `group` hint of its anti-affinity server group (the naive client).
- `nova-multi`: Nova alone, one multi-create request per server group (min/max_count 10), one
  group after the other: Nova's best case for this shape.
- `shoal`: one Shoal cluster (20 node groups of 10, 20 host anti-affinity groupings) created
  through Shoal's API, served by a real Shoal server process with the `openstack` provider as
  an admin: Shoal places the whole cluster, then pins each server to its host.

The clock runs from the first request to every server settled (ACTIVE or ERROR). Violations
are counted from where Nova says each ACTIVE server is: a group with two servers on one host
is one violation. Nova runs on one core in this harness, so absolute rates are low; the ratio
of `shoal` to `nova-multi`, measured in the same run, is what counts (target: >= 0.8).

Run: `python benchmarks/nova_side_by_side.py [--modes shoal,nova-multi,nova-parallel]
[--hosts 100 --zones 3 --groups 20 --group-size 10]`. The Nova venv is installed on first use
(tests/nova/conftest.py). Prints one JSON line per mode (`mode`, `servers`, `active`, `error`,
`violations`, `servers_per_s`) and a final line with the ratio.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.nova.conftest import Peer, start_nova  # noqa: E402
from tests.support.server import ServerProcess, free_port, server_env  # noqa: E402

HEADERS = {"OpenStack-API-Version": "compute 2.74"}
SETTLE_TIMEOUT_S = 1800.0


def nova_client(nova: Peer) -> httpx.Client:
    return httpx.Client(base_url=nova.url, headers=HEADERS, timeout=300)


def cirros(client: httpx.Client) -> str:
    images = client.get("/images", headers={"OpenStack-API-Version": "compute 2.35"}).json()
    return str(next(i["id"] for i in images["images"] if i["name"] == "cirros"))


def wait_settled(client: httpx.Client, expected: int, query: str = "") -> None:
    """Until no server is building (polling a cheap filtered list, to spare Nova's one core)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        time.sleep(0.5)
        building = client.get(f"/servers?status=BUILD&limit=1000{query}").json()["servers"]
        if building:
            continue
        listed = client.get(f"/servers?limit=1000{query}").json()["servers"]
        if len(listed) >= expected:
            return
    raise SystemExit(f"servers did not settle within {SETTLE_TIMEOUT_S:g} s")


def outcome(client: httpx.Client, group_of: dict[str, str]) -> dict[str, int]:
    """active/error counts and violations (groups with two ACTIVE servers on one host)."""
    servers = client.get("/servers/detail?limit=1000").json()["servers"]
    status = collections.Counter(s["status"] for s in servers if s["id"] in group_of)
    hosts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for s in servers:
        if s["id"] in group_of and s["status"] == "ACTIVE":
            hosts[group_of[s["id"]]][s["OS-EXT-SRV-ATTR:host"]] += 1
    violations = sum(1 for c in hosts.values() if max(c.values()) > 1)
    return {
        "active": status.get("ACTIVE", 0),
        "error": status.get("ERROR", 0),
        "violations": violations,
    }


def make_groups(client: httpx.Client, groups: int) -> list[str]:
    out = []
    for g in range(groups):
        body = {"server_group": {"name": f"g{g}", "policy": "anti-affinity"}}
        out.append(client.post("/os-server-groups", json=body).json()["server_group"]["id"])
    return out


def run_nova_parallel(nova: Peer, groups: int, size: int) -> tuple[float, dict[str, str]]:
    with nova_client(nova) as client:
        image = cirros(client)
        sgs = make_groups(client, groups)

        def boot(i: int) -> tuple[str, str]:
            g = i // size
            body = {
                "server": {
                    "name": f"g{g}",
                    "imageRef": image,
                    "flavorRef": "1",
                    "networks": "none",
                },
                "os:scheduler_hints": {"group": sgs[g]},
            }
            with nova_client(nova) as c:
                r = c.post("/servers", json=body)
            assert r.status_code == 202, r.text
            return str(r.json()["server"]["id"]), str(g)

        started = time.monotonic()
        with cf.ThreadPoolExecutor(groups * size) as pool:
            group_of = dict(pool.map(boot, range(groups * size)))
        wait_settled(client, groups * size)
        return time.monotonic() - started, group_of


def run_nova_multi(nova: Peer, groups: int, size: int) -> tuple[float, dict[str, str]]:
    with nova_client(nova) as client:
        image = cirros(client)
        sgs = make_groups(client, groups)
        group_of: dict[str, str] = {}
        started = time.monotonic()
        for g in range(groups):
            body = {
                "server": {
                    "name": f"g{g}",
                    "imageRef": image,
                    "flavorRef": "1",
                    "networks": "none",
                    "min_count": size,
                    "max_count": size,
                    "return_reservation_id": True,
                },
                "os:scheduler_hints": {"group": sgs[g]},
            }
            r = client.post("/servers", json=body)
            assert r.status_code == 202, r.text
            rid = r.json()["reservation_id"]
            found = client.get(f"/servers?reservation_id={rid}&limit=1000").json()["servers"]
            group_of.update({s["id"]: str(g) for s in found})
        wait_settled(client, groups * size)
        return time.monotonic() - started, group_of


def shoal_document(groups: int, size: int) -> dict[str, Any]:
    tiny = {"type": "server", "flavor": "m1.tiny", "image": "cirros"}
    return {
        "name": "side-by-side",
        "node_groups": [
            {"name": f"g{g}", "profile": tiny, "count": size, "min": 0, "max": size}
            for g in range(groups)
        ],
        "groupings": [
            {"name": f"g{g}-apart", "members": [f"g{g}"], "rule": "anti-affinity", "scope": "host"}
            for g in range(groups)
        ],
    }


def run_shoal(nova: Peer, groups: int, size: int, home: Path) -> tuple[float, dict[str, str]]:
    options = {
        "auth_type": "none",
        "compute_endpoint": nova.url,
        "network": "none",
        "mode": "admin",
    }
    env = server_env(
        home,
        port=free_port(),
        provider="openstack",
        provider_options=options,
        extra={"SHOAL_MANAGE": "false", "SHOAL_ENGINE_CONCURRENCY": "64"},
    )
    shoal = ServerProcess(home, env, home / "server.log").start()
    try:
        with shoal.client() as api, nova_client(nova) as client:
            started = time.monotonic()
            r = api.post("/v1/clusters", json=shoal_document(groups, size))
            assert r.status_code == 202, r.text
            cid = r.json()["cluster"]["id"]
            location = r.headers["Location"]
            while True:
                action = api.get(location).json()["action"]
                if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                    break
                time.sleep(0.5)
            wall = time.monotonic() - started
            nodes = api.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]
            group_of = {n["physical_id"]: n["group"] for n in nodes if n["physical_id"]}
            if action["status"] != "SUCCEEDED":
                print(f"shoal action {action['status']}: {action.get('reason')}", file=sys.stderr)
            wait_settled(client, len(group_of))
            return wall, group_of
    finally:
        shoal.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="nova-parallel,nova-multi,shoal")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--group-size", type=int, default=10)
    args = ap.parse_args()
    servers = args.groups * args.group_size
    rates: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="shoal-nova-bench-") as tmp:
        for mode in args.modes.split(","):
            work = Path(tmp) / mode
            work.mkdir()
            nova = start_nova(work, hosts=args.hosts, zones=args.zones)
            try:
                if mode == "nova-parallel":
                    wall, group_of = run_nova_parallel(nova, args.groups, args.group_size)
                elif mode == "nova-multi":
                    wall, group_of = run_nova_multi(nova, args.groups, args.group_size)
                elif mode == "shoal":
                    wall, group_of = run_shoal(nova, args.groups, args.group_size, work)
                else:
                    raise SystemExit(f"unknown mode {mode}")
                with nova_client(nova) as client:
                    result = outcome(client, group_of)
            finally:
                nova.stop()
            rates[mode] = servers / wall
            line = {"mode": mode, "servers": servers, **result}
            line.update(servers_per_s=round(rates[mode], 2), wall_s=round(wall, 1))
            print(json.dumps(line), flush=True)
    if "shoal" in rates and "nova-multi" in rates:
        ratio = rates["shoal"] / rates["nova-multi"]
        print(json.dumps({"shoal_vs_nova_multi": round(ratio, 2), "target": 0.8}), flush=True)


if __name__ == "__main__":
    main()

"""End to end on `local` through a real Shoal server: a cluster with a load balancer over a
node group and a security group on its database; the balancer follows the group as it scales
out and in, the API shows the rules and the members' health, and deleting the cluster leaves no
HAProxy and no nftables table behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import netfilter
from tests.e2e.conftest import StartServer
from tests.e2e.flows import MANAGED, TINY, get_cluster, scale
from tests.support.netns import node_namespace
from tests.support.server import eventually, free_port, wait_ok


def _served(vip: str, port: int) -> set[str]:
    """Node names answering through the balancer over a few requests."""
    names: set[str] = set()
    for _ in range(8):
        try:
            r = httpx.get(f"http://{vip}:{port}/", timeout=2.0, trust_env=False)
        except httpx.HTTPError:
            continue
        if r.status_code == 200:
            names.add(str(r.json()["name"]).removeprefix("netshop-"))
    return names


def _networks(client: httpx.Client, ref: str) -> dict[str, Any]:
    r = client.get(f"/v1/clusters/{ref}/networks")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()["networking"]
    return body


def test_balancer_and_rules_follow_the_cluster(start_server: StartServer) -> None:
    node_port = free_port()
    listen = free_port()
    server = start_server(provider="local", provider_options={"port": node_port}, extra=MANAGED)
    document = {
        "name": "netshop",
        "node_groups": [
            {"name": "web", "profile": dict(TINY), "count": 1, "max": 5},
            {"name": "db", "profile": dict(TINY), "count": 1},
        ],
        "networks": [{"name": "app", "cidr": "10.40.0.0/24"}],
        "security_groups": [
            {"name": "db", "rules": [{"ports": node_port, "from": {"member": "web"}}]}
        ],
        "ports": [{"server": "db", "network": "app", "security_groups": ["db"]}],
        "load_balancers": [
            {
                "name": "front",
                "network": "app",
                "listeners": [{"port": listen, "protocol": "HTTP", "pool": "web"}],
                "pools": [
                    {
                        "name": "web",
                        "members": "web",
                        "port": node_port,
                        "protocol": "HTTP",
                        "health": {"type": "HTTP", "delay": 1, "timeout": 1, "url_path": "/health"},
                    }
                ],
            }
        ],
    }
    with server.client() as client:
        r = client.post("/v1/clusters", json=document)
        wait_ok(client, r)
        cid = r.json()["cluster"]["id"]
        assert get_cluster(client, cid)["status"] == "ACTIVE"

        def vip() -> str | None:
            lbs = _networks(client, cid)["load_balancers"]
            return lbs[0]["serving_at"] if lbs and lbs[0]["serving_at"] else None

        address = eventually(vip)
        assert eventually(lambda: _served(address, listen) == {"web-1"})

        scale(client, cid, "scale_out", 2, "web")
        assert eventually(lambda: _served(address, listen) == {"web-1", "web-2", "web-3"})

        def healthy() -> list[Any] | None:
            pool = _networks(client, cid)["load_balancers"][0]["pools"][0]
            health = {m["server"]: m["health"] for m in pool["members"]}
            return pool["members"] if set(health.values()) == {"UP"} and len(health) == 3 else None

        assert eventually(healthy)
        view = _networks(client, cid)
        (group,) = view["security_groups"]
        assert group["servers"] == ["db-1"]
        assert group["rules"][0]["from_servers"] == ["web-1", "web-2", "web-3"]
        # Enforced with each node in its own network (issue 39): a web node reaches the
        # database's port (the rule), the host does not (no rule for it).
        nodes = {
            n["name"]: n for n in client.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]
        }
        db = nodes["db-1"]["address"].rsplit(":", 1)[0]
        web = node_namespace(server.home, nodes["web-1"]["physical_id"])
        assert _connects(db, node_port, web) and not _connects(db, node_port, None)

        scale(client, cid, "scale_in", 2, "web")
        assert eventually(lambda: _served(address, listen) == {"web-1"})

        home = server.home
        pids = [
            int(p.read_text().split()[0]) for p in (home / "local").rglob("networking/*/lb-*.pid")
        ]
        mine = cid.replace("-", "_")
        assert any(t.endswith(mine) for t in netfilter_tables())

        r = client.delete(f"/v1/clusters/{cid}")
        wait_ok(client, r)

        def gone() -> bool:
            return (
                not any(_alive(p) for p in pids)
                and not _served(address, listen)
                and not any(t.endswith(mine) for t in netfilter_tables())
            )

        assert pids and eventually(gone)


def _connects(address: str, port: int, namespace: Path | None) -> bool:
    """Whether a TCP connect to address:port succeeds, from a node's network (or the host's)."""
    probe = f"import socket; socket.create_connection(({address!r}, {port}), timeout=3)"
    argv = [sys.executable, "-c", probe]
    if namespace is not None:
        argv = ["nsenter", f"--net={namespace}", "--", *argv]
    return subprocess.run(argv, capture_output=True, timeout=60, check=False).returncode == 0


def netfilter_tables() -> set[str]:
    import asyncio

    return asyncio.run(netfilter.tables("shoal_"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

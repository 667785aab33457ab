"""Addresses a document leaves to the cloud are assigned on `local` (issue 26, gap 1), end to
end through a real Shoal server: a named port's and a floating IP's address are the server's own
loopback address, a balancer's VIP its HAProxy's, so the outputs resolve, a deployment taking
them runs (Heat's real agent chain), and each address really answers."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.conftest import StartServer
from tests.e2e.flows import MANAGED, TINY
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 120.0


def _document(node_port: int, listen: int) -> dict[str, Any]:
    return {
        "name": "addrs",
        "instances": [{"name": "app", "profile": dict(TINY)}],
        "networks": [{"name": "app", "cidr": "10.82.0.0/24", "router": "public"}],
        "ports": [{"name": "ap", "server": "app", "network": "app"}],
        "floating_ips": [{"name": "pub", "server": "app", "external": "public"}],
        "load_balancers": [
            {
                "name": "front",
                "network": "app",
                "listeners": [{"port": listen, "protocol": "HTTP", "pool": "web"}],
                "pools": [{"name": "web", "members": "app", "port": node_port}],
            }
        ],
        "software": {
            "configs": {
                "cfg": {
                    "group": "script",
                    "inputs": ["me", "vip", "pub"],
                    "config": '#!/bin/sh\necho "me=$me vip=$vip pub=$pub"\n',
                }
            },
            "deployments": {
                "d": {
                    "config": "cfg",
                    "target": "app",
                    "inputs": {
                        "me": {"network_address": "ap", "of": "port"},
                        "vip": {"network_address": "front", "of": "load_balancer"},
                        "pub": {"network_address": "pub", "of": "floating_ip"},
                    },
                }
            },
        },
        "outputs": {
            "port": {"value": {"network_address": "ap", "of": "port"}},
            "fip": {"value": {"network_address": "pub", "of": "floating_ip"}},
            "vip": {"value": {"network_address": "front", "of": "load_balancer"}},
        },
    }


def test_cloud_assigned_addresses_resolve_and_answer_on_local(start_server: StartServer) -> None:
    node_port, listen = free_port(), free_port()
    server = start_server(
        provider="local",
        provider_options={"port": node_port, "agent_poll_s": 1.0},
        extra=MANAGED,
    )
    with server.client() as client:
        r = client.post("/v1/clusters", json=_document(node_port, listen))
        wait_ok(client, r)
        cid = r.json()["cluster"]["id"]

        def outputs() -> dict[str, Any] | None:
            got = client.get(f"/v1/clusters/{cid}").json()["cluster"]["outputs"]
            ready = {o["name"]: o["value"] for o in got if o["status"] == "ready"}
            return ready if len(ready) == 3 else None

        resolved = eventually(outputs, timeout_s=TIMEOUT_S)
        (node,) = client.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]
        own = str(node["address"]).rsplit(":", 1)[0]
        assert resolved["port"] == own and resolved["fip"] == own, (resolved, node)
        lbs = client.get(f"/v1/clusters/{cid}/networks").json()["networking"]["load_balancers"]
        assert resolved["vip"] == lbs[0]["serving_at"]

        # Each address is usable: the server answers on its own, and through the balancer.
        def answers(url: str) -> bool:
            try:
                return httpx.get(url, timeout=2.0, trust_env=False).status_code == 200
            except httpx.HTTPError:
                return False

        assert eventually(lambda: answers(f"http://{resolved['port']}:{node_port}/"))
        assert eventually(lambda: answers(f"http://{resolved['vip']}:{listen}/"))

        def ran() -> dict[str, Any] | None:
            r = client.get(f"/v1/nodes/{node['id']}/deployments/d")
            if r.status_code != 200:
                return None
            found: dict[str, Any] = r.json()["deployment"]
            assert found["status"] != "FAILED", (found, server.log_tail())
            return found if found["status"] == "COMPLETE" else None

        done = eventually(ran, timeout_s=TIMEOUT_S, every_s=0.5)
        wanted = f"me={own} vip={resolved['vip']} pub={own}"
        assert wanted in done["stdout"], done
        wait_ok(client, client.delete(f"/v1/clusters/{cid}"))

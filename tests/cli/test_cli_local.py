"""On the default local provider: `shoal up` starts real processes, `delete --wait` stops them."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from tests.cli.support import EXAMPLES, Shoal
from tests.support.server import eventually, pid_gone


def fetch(address: str) -> Any:
    with urllib.request.urlopen(f"http://{address}/", timeout=5) as r:
        assert r.status == 200
        return json.loads(r.read())


def test_up_starts_real_nodes_and_delete_stops_them(local_shoal: Shoal) -> None:
    done = local_shoal.ok("up", str(EXAMPLES / "db-pair.yaml"))
    assert "cluster db-pair: ACTIVE" in done.stdout

    cluster = local_shoal.json("describe", "cluster", "db-pair")
    servers = [n for n in cluster["nodes"] if n["kind"] == "server"]
    volumes = [n for n in cluster["nodes"] if n["kind"] == "volume"]
    assert len(servers) == 2 and len(volumes) == 2
    assert len({n["host"] for n in servers}) == 2  # anti-affinity by host

    pids = []
    for node in servers:
        described = fetch(node["address"])  # a real process answers on the node's own address
        assert described["host"] == node["host"]
        assert described["zone"] == node["zone"]
        assert len(described["volumes"]) == 1  # its data volume is attached
        pids.append(described["pid"])

    # the nodes outlive the command that created them
    assert not any(pid_gone(p) for p in pids)

    local_shoal.ok("delete", "db-pair", "--wait")
    eventually(lambda: all(pid_gone(p) for p in pids), timeout_s=30)
    assert local_shoal.json("get", "clusters")["clusters"] == []

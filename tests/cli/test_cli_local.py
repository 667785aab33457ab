"""On the default local provider: `shoal up` starts real processes, `delete --wait` stops them,
and the background Shoal heals killed nodes and lost hosts by itself."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path
from typing import Any

from tests.cli.support import EXAMPLES, Shoal, explain
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


WEB = """\
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 3
groupings:
  - {name: apart, members: [web], rule: anti-affinity, scope: host}
"""
HEAL_TIMEOUT_S = 240.0
"""Generous: the background manager notices within seconds; a loaded machine is slow."""


def answering(address: str) -> Any:
    try:
        return fetch(address)
    except OSError:
        return None


def servers_of(shoal: Shoal) -> dict[str, dict[str, Any]]:
    cluster = shoal.json("describe", "cluster", "shop")
    return {n["name"]: n for n in cluster["nodes"] if n["kind"] == "server"}


def test_the_background_shoal_heals_without_another_command(
    local_shoal: Shoal, tmp_path: Path
) -> None:
    """No server started by hand: the first command's background Shoal keeps the cluster."""
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    local_shoal.ok("up", str(doc))
    status = local_shoal.ok("server", "status")
    assert "background Shoal at http://127.0.0.1:" in status.stdout

    # the node's own log, served by the API
    log = local_shoal.ok("logs", "web-1")
    assert log.stdout.strip(), explain(log)

    # a node process killed behind Shoal's back comes back, with no command run
    nodes = servers_of(local_shoal)
    victim = nodes["web-1"]
    old_pid = fetch(victim["address"])["pid"]
    os.kill(old_pid, signal.SIGKILL)
    eventually(lambda: pid_gone(old_pid), timeout_s=30)
    back = eventually(
        lambda: (a := answering(victim["address"])) and a["pid"] != old_pid and a,
        timeout_s=HEAL_TIMEOUT_S,
        every_s=0.5,
    )
    assert back["name"].endswith("web-1")

    # a failed host: its node is placed again elsewhere, still apart from the others
    lost = nodes["web-2"]["host"]
    failed = local_shoal.ok("host", "fail", lost)
    assert "web-2" in failed.stdout  # named by node, not by provider id

    def replaced() -> dict[str, dict[str, Any]] | None:
        now = servers_of(local_shoal)
        moved = now["web-2"]["host"] != lost and now["web-2"]["status"] == "ACTIVE"
        return now if moved and answering(now["web-2"]["address"]) else None

    now = eventually(replaced, timeout_s=HEAL_TIMEOUT_S, every_s=1.0)
    assert len({n["host"] for n in now.values()}) == 3
    assert lost not in {n["host"] for n in now.values()}

    stopped = local_shoal.ok("server", "stop")
    assert "stopped the Shoal" in stopped.stdout
    assert local_shoal("server", "status").returncode == 1

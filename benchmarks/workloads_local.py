"""Workloads on `local` with real podman containers (issue 22): seed 003's `-e ha.yaml`, whose
API service is a 3-replica host-anti-affine workload on three controllers, behind a balancer
rendering the controllers' addresses. Driven through the CLI and the API of a background Shoal
of its own temporary home (benchmarks/containers.py's `Home`), the image imported once.

- `local-container-kill`: benchmarks/container_kill.py's (`local_container_kill`): `kill -9` of a
  replica's container process -> the replica ready again and answering HTTP, each kill a first
  exit (restarted at once, as Kubernetes does; a second exit within 10 minutes backs off).
- `local-host-fail`: the host of the controller carrying a replica fails -> that replica ready
  on a live controller (the replacement: every other controller already carries one, and the
  rule is one per host), answering HTTP on its new address, and the balancer's page listing
  every replica's address; the host is recovered between runs.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx

from container_kill import local_container_kill
from containers import EXAMPLE, PORT, Home, _get, _image, _ip, _nodes, _until

REPLICAS = 3


def _rows(client: httpx.Client) -> dict[str, dict[str, Any]]:
    found = client.get("/v1/clusters/template/workloads").json()["replicas"]
    return {r["replica"]: r for r in found}


def _serving(client: httpx.Client) -> dict[str, dict[str, Any]] | None:
    """Every replica ready and answering on its node's address; the balancer listing them."""
    nodes = _nodes(client, "template")
    rows = _rows(client)
    if len(rows) != REPLICAS or not all(r["ready"] for r in rows.values()):
        return None
    addresses = []
    for r in rows.values():
        node = nodes.get(r["node"])
        if node is None or node["status"] != "ACTIVE" or not node["address"]:
            return None
        page = _get(f"http://{_ip(node)}:{PORT}/")
        if page is None or f"({_ip(node)})" not in page:
            return None
        addresses.append(_ip(node))
    lb = nodes.get("Balancer")
    page = _get(f"http://{lb['address']}/www/index.html") if lb and lb["address"] else None
    if page is None or any(f"{a}:{PORT}" not in page for a in addresses):
        return None
    return rows


def _up(home: Home) -> None:
    home.shoal(
        "up", str(EXAMPLE / "template.yaml"), "-e", str(EXAMPLE / "ha.yaml"), "--timeout", "300"
    )
    with home.client() as client:
        _until(lambda: _serving(client))


def container_kill(runs: int) -> list[float]:
    """The kill -> ready and answering times of `runs` kills (benchmarks/container_kill.py)."""
    times: list[float] = local_container_kill(runs)["times_s"]
    return times


def host_fail(runs: int) -> list[float]:
    home = Home()
    try:
        _image(home)
        _up(home)
        times: list[float] = []
        with home.client() as client:
            for i in range(runs):
                replica = f"Api-{1 + i % REPLICAS}"
                rows = _rows(client)
                victim = _nodes(client, "template")[rows[replica]["node"]]
                host = victim["host"]
                start = time.monotonic()
                client.post(f"/v1/hosts/{host}/fail").raise_for_status()

                def moved(r: str = replica, old: str = host) -> Any:
                    now = _serving(client)
                    if now is None:
                        return None
                    node = _nodes(client, "template").get(now[r]["node"])
                    return now if node is not None and node["host"] != old else None

                _until(moved)
                times.append(time.monotonic() - start)
                client.post(f"/v1/hosts/{host}/recover").raise_for_status()
        return times
    finally:
        home.close()


def available() -> bool:
    """podman, runc and busybox-static are here (else the scenarios are skipped, said so)."""
    return bool(shutil.which("podman")) and Path("/usr/bin/busybox").exists()

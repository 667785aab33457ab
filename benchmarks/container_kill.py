"""`local-container-kill` (issue 36, item 5): on `local` with real podman, a workload replica's
container is killed (`kill -9` of its main process) `kills` times, each time timed from the kill
to the replica read ready again by Shoal's API (its restart counted, its readiness probe passed)
AND answering HTTP on its node's address with its own page.

Kubernetes restarts a container's first exit at once and backs off only when it keeps exiting;
so does Shoal's keeper (model/restarts.py), so each kill hits a container that has not exited
before: the document has one single-replica workload per kill (`k1`, `k2`, ..., each its own
port), spread over two servers, and the n-th kill kills `k<n>`'s replica. What is timed is
Shoal noticing the exit (the nodes' podman event logs), starting the container again, and the
readiness probe (period 1 s) passing.

Driven through the API of a background Shoal of its own temporary home (the CLI starts it,
benchmarks/containers.py's `Home`), with the busybox image imported. Run as a script it prints
one JSON line: `{"scenario": "local-container-kill", "median_s", "max_s", "kills", "times_s",
"restarts", "load_1m", "load_5m"}`. `local_container_kill(kills=10)` returns that line as a dict
(benchmarks/transitions.py imports it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from containers import Home, _get, _image, _podman, _until
from shoal.providers.local.containers import unmount_under

SCENARIO = "local-container-kill"
CLUSTER = "kill"
FIRST_PORT = 8101
MAX_KILLS = 40
POLL_S = 0.02


def document(kills: int, servers: int = 2) -> str:
    """One cluster of `servers` servers and `kills` one-replica workloads, each answering its
    replica's name on its own port of its node's address, with a readiness probe every second."""
    lines = [
        f"name: {CLUSTER}",
        "node_groups:",
        "  - name: web",
        "    profile: {type: server, flavor: m1.small, image: cirros}",
        f"    count: {servers}",
        "workloads:",
    ]
    for i in range(1, kills + 1):
        port = FIRST_PORT + i - 1
        script = (
            'mkdir -p /tmp/www && echo "replica $SHOAL_REPLICA" > /tmp/www/index.html && '
            f"exec /bin/httpd -f -p $SHOAL_NODE_ADDRESS:{port} -h /tmp/www"
        )
        lines += [
            f"  k{i}:",
            "    replicas: 1",
            "    containers:",
            "      - name: web",
            "        image: localhost/busybox:shoal",
            f"        command: [/bin/sh, -c, {json.dumps(script)}]",
            f"        ports: [{port}]",
            f"        readiness: {{http: /, port: {port}, period_s: 1, timeout_s: 1}}",
        ]
    return "\n".join(lines) + "\n"


def _replicas(client: httpx.Client) -> dict[str, dict[str, Any]]:
    found = client.get(f"/v1/clusters/{CLUSTER}/workloads").json()["replicas"]
    return {r["replica"]: r for r in found}


def _addresses(client: httpx.Client) -> dict[str, str]:
    found = client.get("/v1/nodes", params={"cluster": CLUSTER}).json()["nodes"]
    return {n["name"]: n["address"].split(":")[0] for n in found if n.get("address")}


def _answering(client: httpx.Client, replica: str, port: int, restarts: int) -> bool:
    """`replica` read ready after its `restarts`-th restart, and answering on its address."""
    row = _replicas(client).get(replica)
    if row is None or not row["ready"] or row["restarts"] < restarts:
        return False
    address = _addresses(client).get(row["node"])
    page = _get(f"http://{address}:{port}/") if address else None
    return page is not None and f"replica {replica}" in page


def _pid(home: Home, replica: str) -> int | None:
    """The host pid of `replica`'s running container (from its node's podman store)."""
    for store in (home.path / "local" / "nodes").glob("*/podman"):
        if not (store / "storage.conf").exists():
            continue
        out = _podman(store, "ps", "--filter", "label=shoal.replica", "--format", "json")
        for row in json.loads(out or "[]"):
            if str(row.get("Labels", {}).get("shoal.replica", "")).endswith(f"/{replica}"):
                pid = int(row.get("Pid") or 0)
                return pid if pid > 0 else None
    return None


def _kill_one(home: Home, client: httpx.Client, n: int) -> float:
    replica, port = f"k{n}-1", FIRST_PORT + n - 1
    before = _replicas(client)[replica]["restarts"]
    pid = _until(lambda: _pid(home, replica))
    os.kill(pid, signal.SIGKILL)
    start = time.monotonic()
    deadline = start + 300.0
    while not _answering(client, replica, port, before + 1):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{replica} not ready and answering 300 s after its kill")
        time.sleep(POLL_S)
    return time.monotonic() - start


def local_container_kill(kills: int = 10) -> dict[str, Any]:
    """Kill `kills` replicas' containers (each once), timing each kill -> ready and answering;
    the scenario's JSON line as a dict."""
    if not 1 <= kills <= MAX_KILLS:
        raise ValueError(f"kills must be 1..{MAX_KILLS}, not {kills}")
    home = Home()
    try:
        _image(home)
        doc = home.path / "kill.yaml"
        doc.write_text(document(kills))
        home.shoal("up", str(doc), "--timeout", "300")
        with home.client() as client:
            _until(
                lambda: all(
                    _answering(client, f"k{i}-1", FIRST_PORT + i - 1, 0)
                    for i in range(1, kills + 1)
                )
            )
            times = [_kill_one(home, client, n) for n in range(1, kills + 1)]
            restarts = sum(r["restarts"] for r in _replicas(client).values())
        load = os.getloadavg()
        return {
            "scenario": SCENARIO,
            "median_s": round(statistics.median(times), 3),
            "max_s": round(max(times), 3),
            "kills": kills,
            "times_s": [round(t, 3) for t in times],
            "restarts": restarts,
            "load_1m": round(load[0], 2),
            "load_5m": round(load[1], 2),
        }
    finally:
        home.close()
        _swept(home.path)


def _swept(path: Path, limit_s: float = 30.0) -> None:
    """The home gone for good: conmon's cleanup of a removed container (`podman container
    cleanup`, run as it exits) may create the store's lock file again after `close` removed the
    home, so wait (bounded) until no process names the home, then remove what it left."""
    deadline = time.monotonic() + limit_s
    needle = str(path).encode()
    while time.monotonic() < deadline and any(
        needle in _cmdline(p) for p in Path("/proc").glob("[0-9]*/cmdline")
    ):
        time.sleep(0.1)
    unmount_under(path)  # (an overlay a container left mounted would keep its directory)
    shutil.rmtree(path, ignore_errors=True)


def _cmdline(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10, help=f"1..{MAX_KILLS} (default 10)")
    args = parser.parse_args()
    if not 1 <= args.kills <= MAX_KILLS:
        parser.error(f"kills must be 1..{MAX_KILLS}, not {args.kills}")
    print(json.dumps(local_container_kill(args.kills)), flush=True)


if __name__ == "__main__":
    main()

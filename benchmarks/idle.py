"""What an idle `shoal server` costs, with no clusters and with many empty ones (issue 29: one
tenant's 3,000 empty clusters kept the idle server at 75-94 % of a core).

A `shoal server` (sim provider, state in memory, SQLite) on a private home; the clusters are
created through the API (a node group of count 0), then the server is left alone and its CPU
time (/proc/PID/stat) is read over a window. One JSON line per scenario:
`{"scenario": "idle-0" | "idle-3000", "clusters", "cpu_pct", "window_s"}`.
Run: `python benchmarks/idle.py [--clusters 3000] [--window 20]`; `PYTHONPATH` chooses the
source tree measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

EMPTY = (
    "name: {name}\nnode_groups:\n  - name: web\n"
    "    profile: {{type: server, flavor: m1.tiny, image: cirros}}\n    count: 0\n"
)


def every_cluster(http: httpx.Client) -> list[dict[str, object]]:
    """All clusters, page by page (`GET /v1/clusters` answers at most 1,000 at a time)."""
    found: list[dict[str, object]] = []
    params: dict[str, str | int] = {"limit": 1000}
    while True:
        body = http.get("/v1/clusters", params=params).json()
        found += body["clusters"]
        if not body.get("next_marker"):
            return found
        params = {"limit": 1000, "marker": body["next_marker"]}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve(home: str) -> tuple[subprocess.Popen[bytes], str, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
    env.update(
        SHOAL_HOME=home,
        SHOAL_PORT=str(port),
        SHOAL_PROVIDER="sim",
        SHOAL_PROVIDER_OPTIONS='{"state_path": "memory"}',
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoal", "server", "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the server did not start")
        time.sleep(0.1)
    token = (Path(home) / "admin-token").read_text().strip()
    return proc, url, token


def idle_cpu(pid: int, window_s: float) -> float:
    start = cpu_seconds(pid)
    time.sleep(window_s)
    return 100.0 * (cpu_seconds(pid) - start) / window_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", type=int, default=3000)
    ap.add_argument("--window", type=float, default=20.0)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="shoal-idle-")
    proc, url, token = serve(home)
    try:
        time.sleep(3)  # start-up work done
        cpu = idle_cpu(proc.pid, args.window)
        line = {"scenario": "idle-0", "clusters": 0, "cpu_pct": round(cpu, 1)}
        print(json.dumps({**line, "window_s": args.window}), flush=True)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as http:

            def create(i: int) -> None:
                r = http.post("/v1/clusters", content=EMPTY.format(name=f"empty-{i}"))
                assert r.status_code == 202, r.text

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(create, range(args.clusters)))
            deadline = time.monotonic() + 600
            while True:  # every create has ended (the list is paged: every page read)
                found = every_cluster(http)
                if len(found) >= args.clusters and all(
                    c["status"] in ("ACTIVE", "WARNING", "ERROR") for c in found
                ):
                    break
                assert time.monotonic() < deadline, "clusters never settled"
                time.sleep(1)
        time.sleep(5)
        cpu = idle_cpu(proc.pid, args.window)
        line = {"scenario": f"idle-{args.clusters}", "clusters": args.clusters}
        print(json.dumps({**line, "cpu_pct": round(cpu, 1), "window_s": args.window}))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

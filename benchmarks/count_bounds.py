"""Huge counts against a real `shoal server`: each answer's status, error code, pointer and
time, and the server's resident memory before and after (issue 9: a count of 10^9 anywhere is a
4xx in well under 100 ms and the memory does not move by more than a few MB).

The server runs the sim provider (state in memory) on a private home and a free port. Each
request is sent 5 times; the best time is reported. One JSON line per case, then one with the
server's RSS. Run: `python benchmarks/count_bounds.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

SHOAL = Path(sys.executable).parent / "shoal"


def doc(name: str, count: int) -> str:
    return (
        f"name: {name}\nnode_groups:\n  - name: web\n"
        "    profile: {type: server, flavor: m1.tiny, image: cirros}\n"
        f"    count: {count}\n"
    )


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1])
    return -1


def main() -> None:
    home = tempfile.mkdtemp(prefix="shoal-bounds-")
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
        [str(SHOAL), "server", "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        token = (Path(home) / "admin-token").read_text().strip()
        c = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        c.post("/v1/clusters", content=doc("c", 1))  # the cluster the changes below aim at
        time.sleep(2)
        cases: list[tuple[str, Callable[[], httpx.Response]]] = [
            ("create count 10^9", lambda: c.post("/v1/clusters", content=doc("big", 10**9))),
            ("create count 999999", lambda: c.post("/v1/clusters", content=doc("big", 999_999))),
            (
                "create beyond the inventory",
                lambda: c.post("/v1/clusters", content=doc("big", 5000)),
            ),
            (
                "scale_out count 10^9",
                lambda: c.post("/v1/clusters/c/actions", json={"scale_out": {"count": 10**9}}),
            ),
            (
                "resize by 10^12 percent",
                lambda: c.post(
                    "/v1/clusters/c/actions",
                    json={"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 1e12}},
                ),
            ),
            (
                "receiver params count 10^9",
                lambda: c.post(
                    "/v1/receivers",
                    json={
                        "name": "g",
                        "cluster": "c",
                        "action": "scale_out",
                        "params": {"count": 10**9},
                    },
                ),
            ),
        ]
        before = rss_kb(proc.pid)
        for name, call in cases:
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                r = call()
                best = min(best, time.perf_counter() - t)
            error = r.json()["error"]
            line = {
                "benchmark": "count_bounds",
                "case": name,
                "status": r.status_code,
                "code": error["code"],
                "pointer": error["details"][0]["path"],
                "best_ms": round(best * 1000, 1),
            }
            print(json.dumps(line), flush=True)
        after = rss_kb(proc.pid)
        print(
            json.dumps(
                {"benchmark": "count_bounds", "rss_kb_before": before, "rss_kb_after": after}
            )
        )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

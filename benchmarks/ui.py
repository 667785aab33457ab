"""Dashboard benchmark: time to first render of the topology, 1,000 nodes on 200 hosts (sim).

A real `shoal server` process (sim provider, 200 hosts in 4 zones, state in memory) holds one
cluster of 1,000 m1.tiny servers; a real headless Chromium (Debian's `chromium`) signs in and
opens the Topology page `--loads` times, each a fresh page load. For each load the page itself
records (`window.shoalTiming`): `since_navigation_ms` (navigation start to the topology drawn:
HTML, scripts, sign-in check, the API calls and the drawing), `fetch_ms` (GET
/ui/api/topology and the cluster list, from the page), `render_ms` (building the DOM).
`api_topology_ms` is GET /ui/api/topology alone, from Python. Prints one JSON line with the
medians and maxima, the topology's payload size, and how many nodes the page drew.
Run: `python benchmarks/ui.py [--nodes 1000] [--hosts 200] [--loads 5]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.orchestration import _doc as document  # noqa: E402
from tests.support.server import free_port, server_env, wait_ok  # noqa: E402
from tests.ui.browser import start_chromium, until  # noqa: E402
from tests.ui.server import ShoalServer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--zones", type=int, default=4)
    ap.add_argument("--loads", type=int, default=5)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="shoal-bench-ui-"))
    port = free_port()
    env = server_env(
        home,
        port=port,
        provider="sim",
        provider_options={"state_path": "memory", "hosts": args.hosts, "zones": args.zones},
        extra={"SHOAL_MANAGE": "false"},
    )
    server = ShoalServer(home, env, home / "server.log")
    driver = None
    try:
        server.start()
        url = server.url
        token = server.token
        client = server.client()
        wait_ok(client, client.post("/v1/clusters", content=document(args.nodes)))
        payload = len(client.get("/ui/api/topology").content)
        api_ms = []
        for _ in range(args.loads):
            t0 = time.perf_counter()
            client.get("/ui/api/topology").raise_for_status()
            api_ms.append((time.perf_counter() - t0) * 1000)

        driver = start_chromium()
        driver.get(f"{url}/ui")
        driver.execute_script("sessionStorage.setItem('shoal.token', arguments[0])", token)
        samples = []
        for _ in range(args.loads):
            driver.get("about:blank")
            driver.get(f"{url}/ui#/topology")
            until(driver, lambda: driver.execute_script("return window.shoalTiming"), "render")
            timing = driver.execute_script("return window.shoalTiming")
            chips = driver.execute_script(
                "return document.querySelectorAll('#topo li.node').length"
            )
            samples.append((timing, chips))
        nav = [t["sinceNavigationMs"] for t, _ in samples]
        fetch = [t["fetchMs"] for t, _ in samples]
        render = [t["renderMs"] for t, _ in samples]
        print(
            json.dumps(
                {
                    "benchmark": "ui-topology-first-render",
                    "provider": "sim",
                    "nodes": args.nodes,
                    "hosts": args.hosts,
                    "zones": args.zones,
                    "loads": args.loads,
                    "since_navigation_ms_median": round(statistics.median(nav), 1),
                    "since_navigation_ms_max": round(max(nav), 1),
                    "fetch_ms_median": round(statistics.median(fetch), 1),
                    "render_ms_median": round(statistics.median(render), 1),
                    "api_topology_ms_median": round(statistics.median(api_ms), 1),
                    "topology_payload_bytes": payload,
                    "nodes_drawn": samples[-1][1],
                }
            ),
            flush=True,
        )
    finally:
        if driver is not None:
            driver.quit()
        server.kill()


if __name__ == "__main__":
    main()

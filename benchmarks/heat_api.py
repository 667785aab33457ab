"""Heat API benchmark: Heat's own requests against `shoal server`'s orchestration façade.

Scenarios (names relied on by checks outside the project), one JSON line each with `scenario`,
`seconds` (request to the status Heat's clients wait for, over real HTTP on loopback, as
heatclient's `--wait` polls: GET the stack until it leaves IN_PROGRESS), `cpu_s` (the server
process's CPU over that time, its children included), and the stack's size:
- `stack-create-testresources`: a ResourceGroup of 100, then 1,000 OS::Heat::TestResource,
  request -> CREATE_COMPLETE;
- `stack-update-testresources`: a property change across the same group -> UPDATE_COMPLETE;
- `stack-create-servers-sim`: a ResourceGroup of 1,000 OS::Nova::Server on the `sim` provider
  (no simulated latency) -> CREATE_COMPLETE;
- `event-list`: the 1,000-resource stack's events (one GET).
`heat_seconds` / `ratio` (Heat's time over Shoal's) appear only when real Heat ran the same in
the same run; this script does not start one (docs/heat_api.md says how it was compared).
Run: `PYTHONPATH=src python benchmarks/heat_api.py [--sizes 100,1000] [--servers 1000]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._servers import Server, cpu_seconds, server_env

POLL_S = 0.05
LIMIT_S = 600.0
PROJECT = "admin"


def _inventory(path: Path, hosts: int) -> None:
    lines = ["zones: [az1, az2]", "hosts:"]
    for i in range(hosts):
        lines.append(
            f"  - {{name: h{i + 1}, zone: az{i % 2 + 1}, vcpus: 128, ram_mb: 262144, "
            "disk_gb: 20000, volume_gb: 20000}"
        )
    path.write_text("\n".join(lines) + "\n")


def _group(count: int, member: dict[str, Any]) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": count, "resource_def": member},
            }
        },
    }


def _tests(count: int, value: str) -> dict[str, Any]:
    return _group(
        count, {"type": "OS::Heat::TestResource", "properties": {"value": f"{value}-%index%"}}
    )


def _servers(count: int) -> dict[str, Any]:
    return _group(
        count,
        {"type": "OS::Nova::Server", "properties": {"flavor": "m1.tiny", "image": "cirros"}},
    )


class Client:
    def __init__(self, server: Server, token: str) -> None:
        self.server = server
        self.http = httpx.Client(
            base_url=f"{server.url}/orchestration/v1/{PROJECT}",
            headers={"X-Auth-Token": token},
            timeout=300,
        )

    def settle(self, href: str, wanted: str) -> str:
        deadline = time.monotonic() + LIMIT_S
        while time.monotonic() < deadline:
            status = str(self.http.get(href).json()["stack"]["stack_status"])
            if not status.endswith("IN_PROGRESS"):
                if status != wanted:
                    raise RuntimeError(f"{href}: {status}, not {wanted}")
                return status
            time.sleep(POLL_S)
        raise RuntimeError(f"{href}: still in progress after {LIMIT_S} s")

    def timed(self, scenario: str, send: Any, wanted: str, **facts: Any) -> str:
        cpu0, t0 = cpu_seconds(self.server.pid), time.monotonic()
        r = send()
        if r.status_code not in (201, 202):
            raise RuntimeError(f"{scenario}: {r.status_code} {r.text[:500]}")
        href = r.headers.get("Location") or facts.pop("href")
        self.settle(href, wanted)
        line = {
            "scenario": scenario,
            "seconds": round(time.monotonic() - t0, 3),
            "cpu_s": round(cpu_seconds(self.server.pid) - cpu0, 3),
            **facts,
        }
        print(json.dumps(line), flush=True)
        return str(href)


def run(sizes: list[int], servers: int) -> None:
    with tempfile.TemporaryDirectory(prefix="shoal-heat-bench-") as tmp:
        home = Path(tmp) / "home"
        inventory = Path(tmp) / "inventory.yaml"
        _inventory(inventory, max(4, servers // 100 + 2))
        server = Server(
            home, server_env(home, SHOAL_PROVIDER="sim", SHOAL_INVENTORY=str(inventory))
        )
        server.start()
        try:
            token = (home / "admin-token").read_text().strip()
            c = Client(server, token)
            for n in sizes:
                body = {"stack_name": f"tests-{n}", "template": _tests(n, "a")}
                href = c.timed(
                    "stack-create-testresources",
                    lambda body=body: c.http.post("/stacks", json=body),
                    "CREATE_COMPLETE",
                    resources=n,
                )
                changed = {"template": _tests(n, "b")}
                c.timed(
                    "stack-update-testresources",
                    lambda href=href, changed=changed: c.http.patch(href, json=changed),
                    "UPDATE_COMPLETE",
                    resources=n,
                    href=href,
                )
                cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
                events = c.http.get(f"{href}/events").json()["events"]
                print(
                    json.dumps(
                        {
                            "scenario": "event-list",
                            "seconds": round(time.monotonic() - t0, 3),
                            "cpu_s": round(cpu_seconds(server.pid) - cpu0, 3),
                            "resources": n,
                            "events": len(events),
                        }
                    ),
                    flush=True,
                )
            if servers:
                body = {"stack_name": "servers", "template": _servers(servers)}
                c.timed(
                    "stack-create-servers-sim",
                    lambda: c.http.post("/stacks", json=body),
                    "CREATE_COMPLETE",
                    servers=servers,
                )
        finally:
            server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000", help="TestResource group sizes")
    ap.add_argument("--servers", type=int, default=1000, help="servers on sim (0: skip)")
    args = ap.parse_args()
    run([int(s) for s in args.sizes.split(",") if s], args.servers)


if __name__ == "__main__":
    main()

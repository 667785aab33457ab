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
`heat_seconds` / `ratio` (Heat's time over Shoal's) appear when a real Heat ran the same in the
same run: `--heat-url http://127.0.0.1:8004/v1/PROJECT_ID --heat-token TOKEN` (one started by
`../shared/peers/heat/real_heat.sh`; docs/heat_api.md). Lines are printed once all ran.
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
    """One orchestration endpoint: Shoal's (its server's CPU measured) or a real Heat's."""

    def __init__(self, base: str, token: str, pid: int | None) -> None:
        self.pid = pid
        self.http = httpx.Client(base_url=base, headers={"X-Auth-Token": token}, timeout=300)

    def cpu(self) -> float:
        return cpu_seconds(self.pid) if self.pid is not None else 0.0

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

    def timed(
        self, scenario: str, send: Any, wanted: str, href: str = ""
    ) -> tuple[dict[str, Any], str]:
        cpu0, t0 = self.cpu(), time.monotonic()
        r = send()
        if r.status_code not in (201, 202):
            raise RuntimeError(f"{scenario}: {r.status_code} {r.text[:500]}")
        href = r.headers.get("Location") or href
        self.settle(href, wanted)
        took = {"seconds": round(time.monotonic() - t0, 3), "cpu_s": round(self.cpu() - cpu0, 3)}
        return took, href

    def delete(self, href: str) -> None:
        self.http.delete(href)


class Progress(list[dict[str, Any]]):
    """The figures of one endpoint, each also written to stderr as it is measured (a slow
    real Heat's partial figures survive a stopped run)."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag

    def append(self, line: dict[str, Any]) -> None:
        print(f"{self.tag}: {json.dumps(line)}", file=sys.stderr, flush=True)
        super().append(line)


def scenarios(c: Client, sizes: list[int], servers: int, tag: str) -> list[dict[str, Any]]:
    """Every scenario against one endpoint: one dict each (scenario, size, seconds, cpu_s)."""
    out = Progress(tag)
    for n in sizes:
        body = {"stack_name": f"tests-{n}-{tag}", "template": _tests(n, "a")}
        took, href = c.timed(
            "stack-create-testresources",
            lambda body=body: c.http.post("/stacks", json=body),
            "CREATE_COMPLETE",
        )
        out.append({"scenario": "stack-create-testresources", "resources": n, **took})
        changed = {"template": _tests(n, "b")}
        took, _ = c.timed(
            "stack-update-testresources",
            lambda href=href, changed=changed: c.http.patch(href, json=changed),
            "UPDATE_COMPLETE",
            href,
        )
        out.append({"scenario": "stack-update-testresources", "resources": n, **took})
        cpu0, t0 = c.cpu(), time.monotonic()
        events = c.http.get(f"{href}/events", params={"limit": 1000}).json()["events"]
        out.append(
            {
                "scenario": "event-list",
                "resources": n,
                "events": len(events),
                "seconds": round(time.monotonic() - t0, 3),
                "cpu_s": round(c.cpu() - cpu0, 3),
            }
        )
        c.delete(href)
    if servers:
        body = {"stack_name": f"servers-{tag}", "template": _servers(servers)}
        took, _ = c.timed(
            "stack-create-servers-sim",
            lambda: c.http.post("/stacks", json=body),
            "CREATE_COMPLETE",
        )
        out.append({"scenario": "stack-create-servers-sim", "servers": servers, **took})
    return out


def run(sizes: list[int], servers: int, heat_url: str | None, heat_token: str | None) -> None:
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
            base = f"{server.url}/orchestration/v1/{PROJECT}"
            lines = scenarios(Client(base, token, server.pid), sizes, servers, "shoal")
        finally:
            server.stop()
    if heat_url and heat_token:
        # the same scenarios against a real Heat (no `sim` there: no servers)
        theirs = scenarios(Client(heat_url, heat_token, None), sizes, 0, "heat")
        for line in lines:
            match = next(
                (
                    t
                    for t in theirs
                    if t["scenario"] == line["scenario"]
                    and t.get("resources") == line.get("resources")
                ),
                None,
            )
            if match is not None:
                line["heat_seconds"] = match["seconds"]
                line["ratio"] = round(match["seconds"] / max(line["seconds"], 1e-3), 2)
    for line in lines:
        print(json.dumps(line), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000", help="TestResource group sizes")
    ap.add_argument("--servers", type=int, default=1000, help="servers on sim (0: skip)")
    ap.add_argument("--heat-url", help="a real Heat's /v1/{project} URL, to run the same")
    ap.add_argument("--heat-token", help="a Keystone token for --heat-url")
    args = ap.parse_args()
    run(
        [int(s) for s in args.sizes.split(",") if s],
        args.servers,
        args.heat_url,
        args.heat_token,
    )


if __name__ == "__main__":
    main()

"""Containers benchmark: real podman containers on `local` nodes, driven through the `shoal` CLI.

Each scenario runs against a background Shoal of its own temporary SHOAL_HOME (the CLI starts
it; `shoal server stop` ends it), with the busybox image imported by `shoal image import`:
- `seed003-single`: `shoal up examples/seed003/template.yaml -e single.yaml` (one controller,
  its API service a docker-compose deployment): from the request to the service answering
  HTTP from inside its container; the cluster is deleted between runs.
- `seed003-ha`: the same with `-e pods.yaml` (three controllers whose services are Pods, and a
  balancer): to every controller answering and the balancer's page listing all three.
- `container-kill`: on the single cluster, the service container's process is killed (-9):
  to the container running again (a new pid) and answering HTTP (podman's restart policy
  `always`, which Shoal sets up; Kubernetes' back-off starts at 10 s).
- `host-fail`: on the HA cluster, the host of one controller fails (`POST /v1/hosts/H/fail`):
  to the replacement's Pod answering on its new address and the balancer's page re-rendered
  with it (Kubernetes evicts a lost node's pods after 300 s by default); the host is recovered.
Each prints one JSON line: scenario, runs, median_s, max_s, times_s.
Run: `python benchmarks/containers.py [--runs 3] [--only SCENARIO]` (needs podman, runc,
busybox-static and the agents of `make venv`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "seed003"
PORT = 8081
LIMIT_S = 300.0


class Home:
    """A SHOAL_HOME with its background Shoal, driven through the CLI."""

    def __init__(self) -> None:
        # Short: a node's API socket lives in its workdir (a socket path is <= 108 bytes).
        self.path = Path(tempfile.mkdtemp(prefix="shb-"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
        self.env["SHOAL_HOME"] = str(self.path)
        self.env["SHOAL_PROVIDER_OPTIONS"] = json.dumps({"agent_poll_s": 1.0})
        self.env["SHOAL_RECONCILE_INTERVAL_S"] = "1"

    def shoal(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "shoal", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"shoal {' '.join(args)}: {done.stdout}{done.stderr}")
        return done.stdout

    def client(self) -> httpx.Client:
        state = json.loads((self.path / "server.json").read_text())
        token = (self.path / "admin-token").read_text().strip()
        return httpx.Client(
            base_url=state["url"], headers={"Authorization": f"Bearer {token}"}, timeout=30
        )

    def close(self) -> None:
        self.shoal("server", "stop", check=False)
        for store in (self.path / "local" / "nodes").glob("*/podman"):
            _podman(store, "pod", "rm", "--all", "--force", "--time", "0")
            _podman(store, "rm", "--all", "--force", "--time", "0")
        for record in (self.path / "local" / "resources").glob("*.json"):
            pid = json.loads(record.read_text()).get("pid")
            if isinstance(pid, int):
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
        shutil.rmtree(self.path, ignore_errors=True)


def _podman(store: Path, *args: str) -> str:
    env = {
        **os.environ,
        "CONTAINERS_CONF": str(store / "containers.conf"),
        "CONTAINERS_STORAGE_CONF": str(store / "storage.conf"),
        "CONTAINERS_REGISTRIES_CONF": str(store / "registries.conf"),
    }
    done = subprocess.run(
        ["podman", "--runtime", shutil.which("runc", path="/usr/sbin:/usr/bin") or "runc", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout


def _image(home: Home) -> None:
    rootfs = home.path / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    shutil.copy2("/usr/bin/busybox", rootfs / "bin" / "busybox")
    for applet in ("sh", "httpd", "echo", "mkdir", "sleep", "cat"):
        (rootfs / "bin" / applet).symlink_to("busybox")
    (rootfs / "tmp").mkdir()
    home.shoal("image", "import", str(rootfs), "--name", "localhost/busybox:shoal")


def _until(check: Callable[[], Any], limit_s: float = LIMIT_S) -> Any:
    deadline = time.monotonic() + limit_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {limit_s}s")
        time.sleep(0.1)


def _get(url: str) -> str | None:
    try:
        r = httpx.get(url, timeout=3)
    except httpx.HTTPError:
        return None
    return r.text if r.status_code == 200 else None


def _nodes(client: httpx.Client, cluster: str) -> dict[str, dict[str, Any]]:
    found = client.get("/v1/nodes", params={"cluster": cluster}).json()["nodes"]
    return {n["name"]: n for n in found}


def _ip(node: dict[str, Any]) -> str:
    return str(node["address"]).split(":")[0]


def _serving(client: httpx.Client, cluster: str, controllers: int) -> dict[str, Any] | None:
    nodes = _nodes(client, cluster)
    ctl = [n for name, n in nodes.items() if name.startswith("Controller")]
    if len(ctl) != controllers or any(n["status"] != "ACTIVE" for n in ctl):
        return None
    for n in ctl:
        page = _get(f"http://{_ip(n)}:{PORT}/")
        if page is None or _ip(n) not in page:
            return None
    lb = nodes.get("Balancer")
    if controllers > 1:
        page = _get(f"http://{lb['address']}/www/index.html") if lb else None
        if page is None or any(f"{_ip(n)}:{PORT}" not in page for n in ctl):
            return None
    return nodes


def _up(home: Home, env: str) -> float:
    start = time.monotonic()
    home.shoal("up", str(EXAMPLE / "template.yaml"), "-e", str(EXAMPLE / env), "--timeout", "300")
    with home.client() as client:
        _until(lambda: _serving(client, "template", 3 if env == "pods.yaml" else 1))
    return time.monotonic() - start


def _container_pid(store: Path) -> int | None:
    out = _podman(store, "ps", "--format", "{{.Pid}}").split()
    pids = [int(p) for p in out if p.isdigit() and int(p) > 0]
    return pids[0] if pids else None


def seed003(env: str, runs: int) -> list[float]:
    home = Home()
    try:
        _image(home)
        times = []
        for _ in range(runs):
            times.append(_up(home, env))
            home.shoal("delete", "template", "--wait")
        return times
    finally:
        home.close()


def container_kill(runs: int) -> list[float]:
    home = Home()
    try:
        _image(home)
        _up(home, "single.yaml")
        with home.client() as client:
            node = _nodes(client, "template")["Controller-1"]
        store = home.path / "local" / "nodes" / node["physical_id"] / "podman"
        url = f"http://{_ip(node)}:{PORT}/"
        times = []
        for _ in range(runs):
            first = _until(lambda: _container_pid(store))
            os.kill(first, signal.SIGKILL)
            start = time.monotonic()
            _until(lambda old=first: (p := _container_pid(store)) is not None and p != old)
            _until(lambda: _get(url))
            times.append(time.monotonic() - start)
        return times
    finally:
        home.close()


def host_fail(runs: int) -> list[float]:
    home = Home()
    try:
        _image(home)
        _up(home, "pods.yaml")
        times = []
        with home.client() as client:
            for i in range(runs):
                victim = _nodes(client, "template")[f"Controller-{1 + i % 3}"]
                host = victim["host"]
                start = time.monotonic()
                r = client.post(f"/v1/hosts/{host}/fail")
                r.raise_for_status()

                def moved(name: str = victim["name"], old: str = host) -> Any:
                    now = _nodes(client, "template").get(name)
                    if now is None or now["host"] == old:
                        return None
                    return _serving(client, "template", 3)

                _until(moved)
                times.append(time.monotonic() - start)
                client.post(f"/v1/hosts/{host}/recover").raise_for_status()
        return times
    finally:
        home.close()


SCENARIOS: dict[str, Callable[[int], list[float]]] = {
    "container-kill": container_kill,
    "host-fail": host_fail,
    "seed003-single": lambda runs: seed003("single.yaml", runs),
    "seed003-ha": lambda runs: seed003("pods.yaml", runs),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    for name, scenario in SCENARIOS.items():
        if args.only and name != args.only:
            continue
        load = os.getloadavg()[0]
        times = scenario(args.runs)
        print(
            json.dumps(
                {
                    "scenario": name,
                    "runs": len(times),
                    "median_s": round(statistics.median(times), 3),
                    "max_s": round(max(times), 3),
                    "times_s": [round(t, 3) for t in times],
                    "load_1m": round(load, 2),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()

"""How long `shoal server` takes to exit after SIGTERM under load, against `stop_grace_s`.

Issue 29 measured 25 s at high load (4.4 s at low). This starts `shoal server` (sim provider,
a create that takes an hour, so a provider call is always in flight), then holds open: event
streams, long polls, slowloris connections (headers sent a byte at a time and never finished)
and slow bodies, while client threads keep calling `GET /v1/clusters`; the per-token stream and
long-poll limits are raised so every one of them is really open. Then SIGTERM, and the time
until the process is gone. One JSON line per load level: `streams`, `long_polls`, `slowloris`,
`stop_grace_s`, `exit_seconds`, `exit_code`, `forced` (the watchdog's "exiting now" was
logged: something still held the process at the deadline), `server_cpu_s` (the server's CPU
over its life) and the machine's `load1`.

Run: `PYTHONPATH=$PWD/src .venv/bin/python benchmarks/server_stop.py [--grace 10]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

SHOAL = Path(sys.executable).parent / "shoal"
FORCED = "exiting now"
LEVELS = ((8, 4, 10), (200, 200, 500), (500, 500, 2000))
"""(streams, long polls, slowloris connections)."""

DOC = """
name: slow
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def children_cpu_s() -> float:
    """CPU time of the children waited for so far: the server's whole life once it is reaped."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def connect(port: int, request: bytes) -> socket.socket | None:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(request)
    except OSError:
        return None
    return s


def measure(streams: int, polls: int, slow: int, grace_s: float) -> dict[str, object]:
    home = Path(tempfile.mkdtemp(prefix="shoal-stop-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
    env.update(
        SHOAL_HOME=str(home),
        SHOAL_PROVIDER="sim",
        SHOAL_PROVIDER_OPTIONS=json.dumps({"state_path": "memory", "create_latency_s": 3600}),
        SHOAL_STOP_GRACE_S=str(grace_s),
        SHOAL_MAX_STREAMS_PER_TOKEN=str(streams + 10),
        SHOAL_MAX_STREAMS_PER_PROJECT=str(streams + 10),
        SHOAL_MAX_LONG_POLLS_PER_TOKEN=str(polls + 10),
        SHOAL_MAX_LONG_POLLS_PER_PROJECT=str(polls + 10),
    )
    log_path = home / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(SHOAL), "server", "--port", str(port), "--bind", "127.0.0.1"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    held: list[socket.socket] = []
    stop = threading.Event()
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(log_path.read_text())
            time.sleep(0.1)
        token = (home / "admin-token").read_text().strip()
        auth = {"Authorization": f"Bearer {token}"}
        r = httpx.post(f"{url}/v1/clusters", content=DOC, headers=auth, timeout=30)
        assert r.status_code == 202, r.text

        def get(path: str) -> bytes:
            head = f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
            return head.encode()

        for _ in range(streams):
            if (s := connect(port, get("/v1/events/stream"))) is not None:
                held.append(s)
        for _ in range(polls):
            if (s := connect(port, get("/v1/events?after=2000000000&wait=60"))) is not None:
                held.append(s)
        for i in range(slow):
            partial = b"GET /v1/clusters HTTP/1.1\r\nHost: x\r\n"
            if i % 2:  # a slow body: headers done, 1 byte of a promised megabyte
                partial = (
                    f"POST /v1/clusters HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"
                ).encode()
            if (s := connect(port, partial)) is not None:
                held.append(s)

        def busy() -> None:
            with httpx.Client(base_url=url, headers=auth, timeout=30) as c:
                while not stop.is_set():
                    with contextlib.suppress(httpx.HTTPError):
                        c.get("/v1/clusters")

        workers = [threading.Thread(target=busy, daemon=True) for _ in range(4)]
        for w in workers:
            w.start()
        time.sleep(2.0)  # the load is on: streams subscribed, polls waiting
        cpu_before = children_cpu_s()
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        code = proc.wait(timeout=grace_s * 10 + 60)
        seconds = time.monotonic() - t0
        cpu = round(children_cpu_s() - cpu_before, 2)
    finally:
        stop.set()
        for s in held:
            s.close()
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    logged = log_path.read_text(errors="replace")
    if os.environ.get("KEEP_LOG"):
        shutil.copy(log_path, os.environ["KEEP_LOG"])
    shutil.rmtree(home, ignore_errors=True)
    return {
        "benchmark": "server_stop",
        "streams": streams,
        "long_polls": polls,
        "slowloris": slow,
        "held": len(held),
        "stop_grace_s": grace_s,
        "exit_seconds": round(seconds, 2),
        "exit_code": code,
        "forced": FORCED in logged,
        "within_grace": seconds <= grace_s,
        "server_cpu_s": cpu,
        "load1": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--grace", type=float, action="append", default=[])
    ap.add_argument("--level", type=int, action="append", default=[])
    args = ap.parse_args()
    for grace in args.grace or [10.0]:
        for i, (streams, polls, slow) in enumerate(LEVELS):
            if args.level and i not in args.level:
                continue
            print(json.dumps(measure(streams, polls, slow, grace)), flush=True)


if __name__ == "__main__":
    main()

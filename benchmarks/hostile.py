"""The hostile-input corpus (benchmarks/hostile_cases.py) against a real `shoal server`.

Starts `shoal server` (the local provider: nodes are sandboxed processes with Heat's real agents)
on a private home and a free port, SQLite unless `--database-url` is given, sends each case
once and prints one JSON line per case:
`case`, `status` (the HTTP status, or "timeout"/"dead" when the server did not answer), `seconds`,
`rss_mb_after` (the server's resident memory after the answer) and `failing`; then
`{"summary": "hostile", "cases": N, "failing": M}`. A case fails when the answer is a 5xx (or
none), takes over 2 s, or the server's RSS grows by more than 100 MB. A server that died or
hung is started again, so one bomb does not hide the next.

Then the signal cases (`hostile_signals.py`): a cluster whose deployment run stays IN_PROGRESS,
and hostile bodies POSTed to that run's own signal URL (one line each, with `requests` and
`problem`: the run changed, or racing signals did not end it exactly once).

Run: `PYTHONPATH=$PWD/src .venv/bin/python benchmarks/hostile.py [--timeout 20] [--only NAME]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_signals
from hostile_cases import Case, SignalCase, cases, signal_cases

SHOAL = Path(sys.executable).parent / "shoal"
MAX_SECONDS = 2.0
MAX_GROWTH_MB = 100.0
FOLLOW_S = 15.0


def cpu_s(pid: int) -> float:
    """The process's CPU time so far (user + system), to report beside the wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return -1.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return -1.0


class Server:
    """One `shoal server` process group on a private home."""

    def __init__(self, database_url: str | None) -> None:
        self.database_url = database_url
        self.home = tempfile.mkdtemp(prefix="shoal-hostile-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.port, node_port = free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
        env.update(
            SHOAL_HOME=self.home,
            SHOAL_PORT=str(self.port),
            SHOAL_PROVIDER="local",
            SHOAL_PROVIDER_OPTIONS=json.dumps({"port": node_port, "agent_poll_s": 1.0}),
        )
        if self.database_url:
            env["SHOAL_DATABASE_URL"] = self.database_url
        self.proc = subprocess.Popen(
            [str(SHOAL), "server", "--log-level", "warning"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(Path(self.home) / "server.err", "ab"),  # noqa: SIM115
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError("the server did not start")

    @property
    def token(self) -> str:
        return (Path(self.home) / "admin-token").read_text().strip()

    def alive(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            return False
        try:
            return httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            self.proc = None
        hostile_signals.sweep_nodes(Path(self.home))

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )


def send(server: Server, case: Case, timeout_s: float) -> int | str:
    headers = {
        "Authorization": f"Bearer {server.token}",
        "X-Auth-Token": server.token,
        "Content-Type": case.content_type,
        **case.headers,
    }
    try:
        r = httpx.request(
            case.method,
            server.url + case.path,
            content=case.body,
            headers=headers,
            timeout=timeout_s,
        )
    except httpx.TimeoutException:
        return "timeout"
    except httpx.TransportError:
        return "dead"
    if case.follow is None or r.status_code >= 300:
        return r.status_code
    return follow(server, case.follow, headers, timeout_s)


def follow(server: Server, path: str, headers: dict[str, str], timeout_s: float) -> int | str:
    """GET the cluster until its outputs are known (or stay pending): the last answer's status."""
    deadline = time.monotonic() + FOLLOW_S
    status: int | str = "dead"
    while time.monotonic() < deadline:
        try:
            r = httpx.get(server.url + path, headers=headers, timeout=timeout_s)
        except httpx.TimeoutException:
            return "timeout"
        except httpx.TransportError:
            return "dead"
        status = r.status_code
        if status >= 300:
            return status
        outputs = r.json().get("cluster", {}).get("outputs") or []
        if outputs and all(o.get("status") != "pending" or "longer" in str(o) for o in outputs):
            return status
        time.sleep(0.5)
    return status


def failing(status: int | str, seconds: float, growth_mb: float) -> bool:
    return (
        not isinstance(status, int)
        or status >= 500
        or seconds > MAX_SECONDS
        or growth_mb > MAX_GROWTH_MB
    )


def run_signals(
    server: Server, wanted: list[SignalCase], timeout_s: float
) -> list[dict[str, object]]:
    """The signal cases against one live run (`hostile_signals.py`), one line each."""
    assert server.proc is not None
    pid = server.proc.pid
    lines: list[dict[str, object]] = []
    with server.client() as client:
        run = hostile_signals.start_run(client, Path(server.home))
        for case in wanted:
            before, cpu_before = rss_mb(pid), cpu_s(pid)
            outcome = hostile_signals.send(client, run, case, timeout_s)
            after, cpu = rss_mb(pid), cpu_s(pid) - cpu_before
            worst = max(outcome.statuses, key=lambda s: s if isinstance(s, int) else 999)
            fails = outcome.problem is not None or failing(
                worst, outcome.seconds, after - before if after >= 0 else 0.0
            )
            lines.append(
                {
                    "case": case.name,
                    "status": worst,
                    "statuses": sorted({str(s) for s in outcome.statuses}),
                    "requests": len(outcome.statuses),
                    "seconds": round(outcome.seconds, 3),
                    "p50_seconds": round(outcome.p50_seconds, 3),
                    "wall_seconds": round(outcome.wall_seconds, 3),
                    "server_cpu_s": round(cpu, 3),
                    "rss_mb_after": round(after, 1),
                    "rss_mb_before": round(before, 1),
                    "problem": outcome.problem,
                    "failing": fails,
                }
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    server = Server(args.database_url)
    server.start()
    total = bad = 0
    try:
        for case in cases():
            if args.only and case.name not in args.only:
                continue
            if not server.alive():
                server.stop()
                server.start()
            assert server.proc is not None
            pid = server.proc.pid
            before, cpu_before = rss_mb(pid), cpu_s(pid)
            t0 = time.monotonic()
            status = send(server, case, args.timeout)
            seconds = time.monotonic() - t0
            after, cpu = rss_mb(pid), cpu_s(pid) - cpu_before
            fails = failing(status, seconds, after - before if after >= 0 else 0.0)
            total += 1
            bad += fails
            line = {
                "case": case.name,
                "status": status,
                "seconds": round(seconds, 3),
                "rss_mb_after": round(after, 1),
                "rss_mb_before": round(before, 1),
                "server_cpu_s": round(cpu, 3),
                "failing": fails,
            }
            print(json.dumps(line), flush=True)
            if not isinstance(status, int):
                server.stop()  # a hung or dead server is started afresh for the next case
        wanted = [c for c in signal_cases() if not args.only or c.name in args.only]
        if wanted:
            if not server.alive():
                server.stop()
                server.start()
            for signalled in run_signals(server, wanted, args.timeout):
                total += 1
                bad += bool(signalled["failing"])
                print(json.dumps(signalled), flush=True)
    finally:
        server.stop()
        shutil.rmtree(server.home, ignore_errors=True)
    print(json.dumps({"summary": "hostile", "cases": total, "failing": bad}), flush=True)


if __name__ == "__main__":
    main()

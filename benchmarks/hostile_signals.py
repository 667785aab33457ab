"""The signal cases of the hostile benchmark, sent to a live run on the server under test.

A made-up run id only exercises the 404 path. Here the benchmark creates a cluster whose one
node (local provider, Heat's real agents under bubblewrap) runs a deployment script that waits,
so its run stays IN_PROGRESS; it reads the node's metadata URL from the agents' configuration
(where the node itself finds it), fetches the metadata, and takes the run's signal URL from it
(`deploy_signal_id`), as heat-config-notify would. Each hostile body is then POSTed there: the
answer must be a 4xx and the run (its row, log and events) exactly as before. The last case
races well-formed signals with different exit codes: every answer a 2xx naming the one stored
result, one SIGNALLED event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from hostile_cases import SignalCase

CLUSTER = "sigrun"
DEPLOYMENT = "wait"
SETUP_TIMEOUT_S = 180.0

DOCUMENT = f"""
name: {CLUSTER}
node_groups:
  - name: n
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
    count: 1
software:
  configs:
    wait:
      group: script
      outputs: [result]
      config: |
        #!/bin/sh
        sleep 3600
  deployments:
    {DEPLOYMENT}:
      config: wait
      target: n
      timeout: 3600
"""


@dataclass(frozen=True)
class LiveRun:
    """The run the signal cases aim at: its signal URL, and where to read it back."""

    signal_url: str
    node_id: str


@dataclass(frozen=True)
class Outcome:
    statuses: list[int | str]
    seconds: float
    """The slowest answer's time."""
    p50_seconds: float
    wall_seconds: float
    """From the first request sent to the last answer (all `copies` at once)."""
    problem: str | None
    """Why the case fails besides its statuses (the run changed, or ended more than once)."""


def _eventually(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {SETUP_TIMEOUT_S:g} s")
        time.sleep(0.5)


def start_run(client: httpx.Client, home: Path) -> LiveRun:
    """Create the cluster and wait until its run is IN_PROGRESS; its URLs as the node sees."""
    r = client.post("/v1/clusters", content=DOCUMENT, headers={"Content-Type": "application/yaml"})
    if r.status_code >= 300:
        raise RuntimeError(f"creating {CLUSTER}: {r.status_code} {r.text}")

    def in_progress() -> dict[str, Any] | None:
        rows = client.get(f"/v1/clusters/{CLUSTER}/deployments").json().get("deployments", [])
        return next((d for d in rows if d["status"] == "IN_PROGRESS"), None)

    row = _eventually(in_progress, "the run did not start")
    [node] = client.get("/v1/nodes", params={"cluster": CLUSTER}).json()["nodes"]
    conf = home / "local" / "nodes" / str(node["physical_id"]) / "agents" / "etc"
    found = re.search(r"metadata_url = (\S+)", (conf / "os-collect-config.conf").read_text())
    if found is None:
        raise RuntimeError("the agents' configuration holds no metadata URL")
    metadata = httpx.get(found.group(1).replace("$$", "$"), timeout=10).json()
    for d in metadata["deployments"]:
        if d["id"] == row["action_id"]:
            inputs = {i["name"]: i.get("value") for i in d["inputs"]}
            return LiveRun(str(inputs["deploy_signal_id"]), str(row["node_id"]))
    raise RuntimeError("the node's metadata does not serve its run")


def snapshot(client: httpx.Client, run: LiveRun) -> dict[str, Any]:
    """Everything a signal could change: the run's row and log, and its SIGNALLED events."""
    log = client.get(f"/v1/nodes/{run.node_id}/deployments/{DEPLOYMENT}").json()
    events = client.get("/v1/events", params={"cluster": CLUSTER, "limit": 10_000}).json()
    signalled = [e for e in events.get("events", []) if e.get("status") == "SIGNALLED"]
    return {"log": log, "signalled": signalled}


def _altered(url: str) -> str:
    token = parse_qs(urlsplit(url).query)["token"][0]
    flipped = ("0" if token[-1] != "0" else "1") + token[1:]
    return url.replace(token, flipped)


Answer = tuple[int | str, str | None, float]
"""The HTTP status (or "timeout"/"dead"), for a 2xx the run status the answer named, and how
long that answer took."""


async def _post_all(url: str, bodies: list[bytes], timeout_s: float) -> list[Answer]:
    limits = httpx.Limits(max_connections=len(bodies))
    async with httpx.AsyncClient(timeout=timeout_s, limits=limits) as client:

        async def one(body: bytes) -> Answer:
            t0 = time.monotonic()
            try:
                r = await client.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
            except httpx.TimeoutException:
                return "timeout", None, time.monotonic() - t0
            except httpx.TransportError as e:
                return f"dead: {type(e).__name__}", None, time.monotonic() - t0
            named = r.json().get("status") if r.status_code < 300 else None
            return r.status_code, named, time.monotonic() - t0

        return list(await asyncio.gather(*(one(b) for b in bodies)))


def send(client: httpx.Client, run: LiveRun, case: SignalCase, timeout_s: float) -> Outcome:
    before = snapshot(client, run)
    url = _altered(run.signal_url) if case.wrong_token else run.signal_url
    bodies = [case.bodies[i % len(case.bodies)] for i in range(case.copies)]
    t0 = time.monotonic()
    answered = asyncio.run(_post_all(url, bodies, timeout_s))
    wall = time.monotonic() - t0
    after = snapshot(client, run)
    statuses = [status for status, _, _ in answered]
    times = sorted(t for _, _, t in answered)
    problem: str | None = None
    if case.ends_run:
        problem = _one_result(answered, before, after)
    elif after != before:
        problem = "the run changed"
    elif not all(isinstance(s, int) and 400 <= s < 500 for s in statuses):
        problem = "not refused with a 4xx"
    return Outcome(statuses, times[-1], times[len(times) // 2], wall, problem)


def _one_result(
    answered: list[Answer], before: dict[str, Any], after: dict[str, Any]
) -> str | None:
    run = after["log"].get("deployment", {})
    if before["log"].get("deployment", {}).get("status") != "IN_PROGRESS":
        return "the run had already ended before the race"
    if run.get("status") not in ("COMPLETE", "FAILED"):
        return f"the run did not end: {run.get('status')}"
    if (run["status"] == "COMPLETE") != (run.get("status_code") == 0):
        return f"stored {run['status']} with exit code {run.get('status_code')}"
    if len(after["signalled"]) - len(before["signalled"]) != 1:
        return f"{len(after['signalled']) - len(before['signalled'])} SIGNALLED events, not 1"
    if not all(isinstance(s, int) and 200 <= s < 300 for s, _, _ in answered):
        return "a well-formed signal was not accepted"
    named = {n for _, n, _ in answered}
    if named != {run["status"]}:
        return f"the answers named {sorted(map(str, named))}, the run is {run['status']}"
    return None


def sweep_nodes(home: Path) -> None:
    """SIGKILL the local nodes the server left: they run in their own sessions."""
    for path in (home / "local" / "resources").glob("*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        pid, key = data.get("pid"), data.get("key", "")
        if not (isinstance(pid, int) and key):
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if key.encode() in argv:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

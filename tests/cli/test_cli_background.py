"""The managed default: one background Shoal per home, found again, stopped by `server stop`."""

from __future__ import annotations

import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from shoal.cli import background
from tests.cli.support import Shoal, explain
from tests.support.server import eventually, pid_gone

WEB = """\
name: web
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
"""


def test_one_background_shoal_per_home(shoal: Shoal, home: Path, tmp_path: Path) -> None:
    assert shoal("server", "status").returncode == 1  # nothing runs yet

    # two commands at once start one server between them
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: shoal("get", "clusters"), range(2)))
    assert all(r.returncode == 0 for r in runs), [explain(r) for r in runs]
    assert sum("started a background Shoal" in r.stderr for r in runs) == 1
    first = background.read_state(home)
    assert first is not None and first.background

    # later commands find it again; it outlives each of them
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    up = shoal.ok("up", str(doc))
    assert "started a background Shoal" not in up.stderr
    assert background.read_state(home) == first
    status = shoal.ok("server", "status")
    assert first.url in status.stdout and str(first.pid) in status.stdout

    # GET / is a small index of links, no token needed
    with urllib.request.urlopen(f"{first.url}/", timeout=10) as r:
        index = json.loads(r.read())
    assert index["links"]["clusters"] == "/v1/clusters"

    # nothing under the home is for group or others: server.json, its log, the nodes' tree
    private = [p for p in home.rglob("*") if not p.is_symlink() and p.lstat().st_mode & 0o077]
    assert private == [], private

    # its log tells the engine's work, not only access lines
    log = background.log_path(home).read_text()
    assert "CLUSTER_CREATE of cluster web SUCCEEDED" in log, log

    stopped = shoal.ok("server", "stop")
    assert f"pid {first.pid}" in stopped.stdout
    eventually(lambda: pid_gone(first.pid), timeout_s=60)
    assert background.read_state(home) is None
    assert "no Shoal server runs" in shoal.ok("server", "stop").stdout

    # the next command starts a new one, on the same data
    again = shoal.json("get", "clusters")
    assert [c["name"] for c in again["clusters"]] == ["web"]
    second = background.read_state(home)
    assert second is not None and second.pid != first.pid


def test_a_background_shoal_that_cannot_start_says_why(home: Path) -> None:
    broken = Shoal(home, provider="no-such-provider")
    done = broken("get", "clusters")
    assert done.returncode == 1, explain(done)
    assert "did not start" in done.stderr and "no-such-provider" in done.stderr, explain(done)
    assert "Traceback" not in done.stderr

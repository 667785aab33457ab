"""Everyday commands: --version, describe node|action|host, get -o wide|name|-w, events
--limit/--since, `events -f` ending with its cluster, and output that fits 80 columns."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from shoal import __version__
from tests.cli.support import Shoal, explain

WEB = """\
name: a-rather-long-virtual-cluster-name
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
"""
NAME = "a-rather-long-virtual-cluster-name"


def make(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))


def test_version_and_help_in_80_columns(shoal: Shoal) -> None:
    assert shoal.ok("--version").stdout.strip() == f"shoal {__version__}"
    narrow = Shoal(shoal.home, extra={"COLUMNS": "80"})
    shown = narrow.ok("nodegroup", "create", "--help").stdout
    assert "--availability-zone" in shown and "…" not in shown


def test_describe_get_and_events(shoal: Shoal, tmp_path: Path) -> None:
    make(shoal, tmp_path)
    narrow = Shoal(shoal.home, extra={"COLUMNS": "80"})
    for what in ("clusters", "nodes", "actions"):
        table = narrow.ok("get", what).stdout
        assert "…" not in table, table
        assert all(len(line) <= 80 for line in table.splitlines()), table

    names = shoal.ok("get", "nodes", "-o", "name").stdout.split()
    assert sorted(names) == ["web-1", "web-2"]
    assert shoal.ok("get", "clusters", "-o", "name").stdout.split() == [NAME]
    nodes = shoal.json("get", "nodes")["nodes"]
    wide = shoal.ok("get", "nodes", "-o", "wide").stdout
    assert all(n["id"] in wide and n["physical_id"] in wide for n in nodes)

    node = shoal.json("describe", "node", "web-1")
    assert node["name"] == "web-1" and node["status"] == "ACTIVE"
    assert node["host"] in shoal.ok("describe", "node", "web-1").stdout
    missing = shoal("describe", "node", "web-9")
    assert missing.returncode == 2 and "no node web-9" in missing.stderr, explain(missing)

    action_id = shoal.ok("get", "actions", "-o", "name").stdout.split()[0]
    described = shoal.json("describe", "action", action_id)
    assert described["action"]["status"] == "SUCCEEDED"
    assert "steps" in shoal.ok("describe", "action", action_id).stdout

    no_logs = shoal("logs", "web-1")  # the sim provider's servers write no logs
    assert no_logs.returncode == 2 and "keeps no node logs" in no_logs.stderr, explain(no_logs)

    host = shoal.json("describe", "host", node["host"])
    assert "web-1" in [n["name"] for n in host["nodes"]]

    everything = shoal.json("events", "--cluster", NAME)["events"]
    last_two = shoal.json("events", "--cluster", NAME, "--limit", "2")["events"]
    assert last_two == everything[-2:]
    assert shoal.json("events", "--cluster", NAME, "--since", "1h")["events"] == everything
    assert shoal.json("events", "--cluster", NAME, "--since", "2999-01-01")["events"] == []
    bad = shoal("events", "--since", "yesterday")
    assert bad.returncode == 2 and "--since" in bad.stderr, explain(bad)


def test_events_follow_ends_when_its_cluster_is_deleted(shoal: Shoal, tmp_path: Path) -> None:
    make(shoal, tmp_path)
    follower = shoal.popen("events", "--cluster", NAME, "-f", "-o", "json")
    try:
        shoal.ok("delete", NAME, "--wait")
        out, err = follower.communicate(timeout=120)
    finally:
        if follower.poll() is None:
            follower.send_signal(signal.SIGKILL)
            follower.wait()
    # it ended by itself, cleanly (a deleted cluster's events can no longer be asked for, so
    # the last ones may be missed: the follower stops at the first answer saying it is gone)
    assert follower.returncode == 0, err
    assert "Traceback" not in err
    assert all(json.loads(line)["id"] for line in out.splitlines())


def test_get_watch_ends_quietly_on_ctrl_c(shoal: Shoal, tmp_path: Path) -> None:
    make(shoal, tmp_path)
    watcher = shoal.popen("get", "nodes", "-w", "--interval", "0.5", "-o", "name")
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().strip() in ("web-1", "web-2")
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
    except subprocess.TimeoutExpired:
        watcher.kill()
        raise
    assert watcher.returncode == 0

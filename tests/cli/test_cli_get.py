"""`shoal get`, `events` and `action`: listings as tables, JSON and YAML."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import yaml

from tests.cli.support import Shoal, explain
from tests.support.polling import eventually

WEB = """\
name: web
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
    max: 6
"""


def up(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB)
    shoal.ok("up", str(doc))


def test_get_everything(shoal: Shoal, tmp_path: Path) -> None:
    up(shoal, tmp_path)
    clusters = shoal.json("get", "clusters")["clusters"]
    assert [c["name"] for c in clusters] == ["web"]
    nodes = shoal.json("get", "nodes", "--cluster", "web")["nodes"]
    assert sorted(n["name"] for n in nodes) == ["web-1", "web-2"]
    actions = shoal.json("get", "actions", "--cluster", "web")["actions"]
    assert [(a["action"], a["status"]) for a in actions] == [("CLUSTER_CREATE", "SUCCEEDED")]
    steps = shoal.json("get", "actions", "--cluster", "web", "--all")["actions"]
    assert len(steps) > len(actions)
    groups = yaml.safe_load(shoal.ok("get", "nodegroups", "-c", "web", "-o", "yaml").stdout)
    assert groups["nodegroups"][0]["name"] == "web"
    table = shoal.ok("get", "nodes").stdout
    assert "web-1" in table and "ACTIVE" in table
    assert shoal("get", "nodegroups").returncode == 2
    assert shoal("get", "things").returncode == 2


def test_events_lists_the_cluster_history(shoal: Shoal, tmp_path: Path) -> None:
    up(shoal, tmp_path)
    events = shoal.json("events", "--cluster", "web")["events"]
    ids = [e["id"] for e in events]
    assert ids == sorted(ids)
    assert any(e["obj_type"] == "CLUSTER" and e["status"] == "ACTIVE" for e in events)
    assert {e["obj_name"] for e in events if e["obj_type"] == "NODE"} == {"web-1", "web-2"}
    table = shoal.ok("events", "-c", "web").stdout
    assert "CLUSTER_CREATE" in table


def _lines(stream: subprocess.Popen[str], *, stderr: bool = False) -> queue.Queue[str]:
    q: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        source = stream.stderr if stderr else stream.stdout
        assert source is not None
        for line in source:
            q.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return q


def _drain(q: queue.Queue[str]) -> list[str]:
    """What the pump has read so far (the process has ended)."""
    out: list[str] = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            out.append(q.get(timeout=0.5))
        except queue.Empty:
            break
    return out


def _until(q: queue.Queue[str], want: str) -> list[str]:
    """The lines read until one holding `want` (inclusive)."""
    seen: list[str] = []

    def arrived() -> list[str] | None:
        while not q.empty():
            seen.append(q.get_nowait())
            if want in seen[-1]:
                return seen
        return None

    found: list[str] = eventually(arrived, lambda: f"a line with {want!r}; saw {seen}")
    return found


def test_events_follow_shows_new_events_until_ctrl_c(shoal: Shoal, tmp_path: Path) -> None:
    up(shoal, tmp_path)
    follower = shoal.popen("events", "--cluster", "web", "-f", "-o", "json")
    try:
        q = _lines(follower)
        _until(q, '"CLUSTER_CREATE"')  # the history first
        shoal.ok("scale", "web", "--count", "3")
        seen = _until(q, '"CLUSTER_RESIZE"')
        assert all(json.loads(line)["id"] for line in seen)  # one JSON object per line
        follower.send_signal(signal.SIGINT)
        assert follower.wait(timeout=30) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_action_show_and_cancel(shoal: Shoal, tmp_path: Path) -> None:
    up(shoal, tmp_path)
    action = shoal.json("get", "actions", "-c", "web")["actions"][0]
    shown = shoal.json("action", "show", action["id"])
    assert shown["action"]["id"] == action["id"]
    assert shown["action"]["status"] == "SUCCEEDED"
    assert sum(shown["children"].values()) >= 2
    assert action["id"] in shoal.ok("action", "show", action["id"]).stdout
    ended = shoal("action", "cancel", action["id"])  # it has ended: refused
    assert ended.returncode == 2, explain(ended)
    assert "already ended" in ended.stderr
    unknown = shoal("action", "show", "no-such-action")
    assert unknown.returncode == 2
    assert "not found" in unknown.stderr


def test_project_create_prints_a_token(shoal: Shoal) -> None:
    body = shoal.json("project", "create", "team-b")
    assert body["project"]["name"] == "team-b"
    assert body["token"]
    taken = shoal("project", "create", "team-b")
    assert taken.returncode == 2, explain(taken)


def test_an_interrupted_up_leaves_its_action_to_the_server(home: Path, tmp_path: Path) -> None:
    """Ctrl-C stops the waiting, not the action: the background Shoal's engine finishes it.

    The interrupt is sent as soon as the command prints the cluster's first event, and each
    create takes 20 s, so the command is surely still waiting then, however slow the machine.
    """
    slow = Shoal(
        home,
        provider="sim",
        provider_options={"state_path": "sim.db", "create_latency_s": 20.0},
    )
    doc = tmp_path / "web.yaml"
    doc.write_text(WEB.replace("count: 2", "count: 4"))
    proc = slow.popen("up", str(doc))
    try:
        q = _lines(proc, stderr=True)
        _until(q, "CLUSTER")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        err = "".join(_drain(q))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "goes on in the server" in err and "shoal action wait" in err, err
    assert "Traceback" not in err
    action = slow.json("get", "actions")["actions"][0]
    done = slow.ok("action", "wait", action["id"])
    assert "SUCCEEDED" in done.stdout
    assert slow.json("describe", "cluster", "web")["status"] == "ACTIVE"

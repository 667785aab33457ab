"""Remote mode: the same commands against a real `shoal server` subprocess."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.support import EXAMPLES, Shoal, explain
from tests.support.server import eventually, free_port

START_TIMEOUT_S = 180.0


class Server:
    def __init__(self, proc: subprocess.Popen[str], url: str, home: Path) -> None:
        self.proc = proc
        self.url = url
        self.home = home

    @property
    def token(self) -> str:
        return (self.home / "admin-token").read_text().strip()


@pytest.fixture
def server(home: Path, tmp_path: Path) -> Iterator[Server]:
    """`shoal server --port <free>` on the sim provider; killed at the end whatever happens."""
    port = free_port()
    launcher = Shoal(home, provider="sim", provider_options={"state_path": "sim.db"})
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        launcher.argv("server", "--port", str(port), "--bind", "127.0.0.1"),
        env=launcher.env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.05)
        yield Server(proc, url, home)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


def client(tmp_path: Path, url: str, token: str | None) -> Shoal:
    """A `shoal` on another, empty home: everything it knows comes from the server."""
    other = tmp_path / "client-home"
    other.mkdir(exist_ok=True)
    return Shoal(other, url=url, token=token)


def test_remote_commands_against_a_real_server(server: Server, tmp_path: Path) -> None:
    log = (tmp_path / "server.log").read_text()
    assert str(server.home / "admin-token") in log
    assert server.url in log

    shoal = client(tmp_path, server.url, server.token)
    done = shoal.ok("up", str(EXAMPLES / "three-tier.yaml"))
    assert "cluster shop: ACTIVE" in done.stdout
    cluster = shoal.json("describe", "cluster", "shop")
    assert len(cluster["nodes"]) == 12

    shoal.ok("scale", "shop", "--nodegroup", "web", "--count", "6")
    shoal.ok(
        "nodegroup", "create", "--cluster", "shop", "--flavor", "m1.small",
        "--count", "2", "--availability-zone", "az1",
    )  # fmt: skip
    groups = {g["name"]: g for g in shoal.json("get", "nodegroups", "-c", "shop")["nodegroups"]}
    assert groups["web"]["count"] == 6
    assert groups["ng-m1-small-az1"]["zones"] == ["az1"]

    # without --wait, a server runs the action: the command returns at once
    accepted = shoal.json("delete", "shop")
    action_id = accepted["action"]["id"]
    assert shoal.json("action", "wait", action_id)["action"]["status"] == "SUCCEEDED"
    assert shoal.json("get", "clusters")["clusters"] == []

    later = shoal.ok("up", str(EXAMPLES / "db-pair.yaml"), "--no-wait")
    assert "accepted: CLUSTER_CREATE" in later.stdout
    eventually(
        lambda: shoal.json("describe", "cluster", "db-pair")["status"] == "ACTIVE", timeout_s=60
    )


def test_remote_url_and_token_as_options(server: Server, tmp_path: Path) -> None:
    shoal = client(tmp_path, "", None)
    no_token = shoal("get", "clusters", "--url", server.url)
    assert no_token.returncode == 2, explain(no_token)
    assert "token" in no_token.stderr
    listed = shoal.json("get", "clusters", "--url", server.url, "--token", server.token)
    assert listed == {"clusters": []}


def test_remote_errors_and_a_tenant(server: Server, tmp_path: Path) -> None:
    admin = client(tmp_path, server.url, server.token)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nnode_groups:\n  - name: web\n    count: 2\n")
    refused = admin("up", str(bad))
    assert refused.returncode == 2, explain(refused)
    assert "/node_groups/0" in refused.stderr

    token = admin.json("project", "create", "team-b")["token"]
    tenant = client(tmp_path, server.url, token)
    doc = tmp_path / "web.yaml"
    doc.write_text(
        "name: web\nnode_groups:\n  - name: web\n"
        "    profile: {type: server, flavor: m1.tiny, image: cirros}\n    count: 1\n"
    )
    tenant.ok("up", str(doc), "--timeout", "60")
    assert [c["name"] for c in tenant.json("get", "clusters")["clusters"]] == ["web"]
    forbidden = tenant("project", "create", "team-c")
    assert forbidden.returncode == 2


def test_server_stops_cleanly_on_sigterm(server: Server) -> None:
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=30) == 0


def test_unreachable_server_exits_1(tmp_path: Path) -> None:
    shoal = client(tmp_path, f"http://127.0.0.1:{free_port()}", "x")
    done = shoal("get", "clusters")
    assert done.returncode == 1
    assert "cannot reach" in done.stderr

"""Fair shares against a real `shoal server` (sim provider): held-open requests bounded per
token and per project (429 with Retry-After and the limit), headers and bodies that never
finish are cut off, receivers bounded per cluster, and finite default quotas for tenants.
Limits are set small here so a few sockets reach them."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.cli.support import Shoal
from tests.support.server import eventually, free_port, wait_healthy

START_TIMEOUT_S = 180.0
SHOP = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
    max: 5
    scaling: {number: 1}
"""


@dataclass
class Served:
    url: str
    port: int
    token: str

    def http(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def hold(self, path: str, token: str | None = None) -> socket.socket:
        """A request sent whose answer is read only as far as its status line."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        auth = f"Authorization: Bearer {token or self.token}\r\n"
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
        return s


def _status(s: socket.socket) -> int:
    head = s.recv(4096)
    return int(head.split(b" ", 2)[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("fair-home")
    port = free_port()
    launcher = Shoal(
        home,
        provider="sim",
        provider_options={"state_path": "memory"},
        extra={
            "SHOAL_MANAGE": "false",
            "SHOAL_MAX_STREAMS_PER_TOKEN": "3",
            "SHOAL_MAX_STREAMS_PER_PROJECT": "4",
            "SHOAL_MAX_LONG_POLLS_PER_TOKEN": "2",
            "SHOAL_MAX_LONG_POLLS_PER_PROJECT": "3",
            "SHOAL_HEADER_TIMEOUT_S": "1",
            "SHOAL_BODY_TIMEOUT_S": "1",
            "SHOAL_RECEIVERS_PER_CLUSTER": "2",
        },
    )
    log_path = home.parent / "fair-server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            launcher.argv("server", "--port", str(port), "--bind", "127.0.0.1"),
            env=launcher.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, log_path, START_TIMEOUT_S)
        yield Served(url, port, (home / "admin-token").read_text().strip())
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _new_token(served: Served, project: str = "admin") -> str:
    with served.http() as http:
        r = http.post(f"/v1/projects/{project}/tokens", json={"name": f"t{time.monotonic_ns()}"})
    assert r.status_code == 201, r.text
    token: str = r.json()["token"]
    return token


def _refusal(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 429, r.text
    assert r.headers["Retry-After"].isdigit()
    error: dict[str, Any] = r.json()["error"]
    assert error["code"] == "too_many_requests"
    return error


def test_event_streams_are_bounded_per_token_and_per_project(served: Served) -> None:
    # The share is taken before a stream's first query (a flood over the limit costs no query),
    # and a stream refused after it (an unknown cluster) gives its place back.
    with served.http() as http:
        for _ in range(5):  # more than the token's 3
            assert http.get("/v1/events/stream", params={"cluster": "nope"}).status_code == 404
    mine = [served.hold("/v1/events/stream") for _ in range(3)]
    try:
        assert [_status(s) for s in mine] == [200, 200, 200]
        with served.http() as http:
            error = _refusal(http.get("/v1/events/stream"))
            assert error["details"][0]["limit"] == 3 and error["details"][0]["scope"] == "token"
            assert http.get("/v1/clusters").status_code == 200  # other calls go on
        other = _new_token(served)  # the same project, another token: one more fits
        fourth = served.hold("/v1/events/stream", other)
        try:
            assert _status(fourth) == 200
            with served.http(other) as http:
                error = _refusal(http.get("/v1/events/stream"))
                assert error["details"][0] == {
                    "path": "",
                    "message": "at most 4 event streams per project",
                    "limit": 4,
                    "in_use": 4,
                    "scope": "project",
                }
        finally:
            fourth.close()
    finally:
        mine.pop().close()
    # A stream that ends gives its place back.
    with served.http() as http:

        def opened() -> bool:
            with http.stream("GET", "/v1/events/stream") as r:
                return r.status_code == 200

        eventually(opened, timeout_s=30)
    for s in mine:
        s.close()


def test_long_polls_are_bounded_per_token(served: Served) -> None:
    far = "/v1/events?after=2000000000&wait=60"
    held = [served.hold(far) for _ in range(2)]
    try:
        with served.http() as http:

            def refused() -> bool:  # the two held polls have started
                return http.get(far.replace("60", "30")).status_code == 429

            eventually(refused, timeout_s=30)
            error = _refusal(http.get(far))
            assert error["details"][0]["limit"] == 2
            # Without `wait` it is an ordinary read, never refused.
            assert http.get("/v1/events?after=2000000000").status_code == 200
    finally:
        for s in held:
            s.close()


def test_headers_that_never_finish_are_closed(served: Served) -> None:
    slow = []
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", served.port), timeout=60)
        s.sendall(b"GET /v1/clusters HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(s)
    try:
        with served.http() as http:
            assert http.get("/v1/clusters").status_code == 200
        for s in slow:
            assert s.recv(1) == b""  # closed by the server (the socket's timeout is 60 s)
    finally:
        for s in slow:
            s.close()


def test_a_body_that_never_finishes_gets_408(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=60) as s:
        s.sendall(
            b"POST /v1/clusters HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
            + f"Authorization: Bearer {served.token}\r\n\r\nname: slow\n".encode()
        )
        assert _status(s) == 408


def test_receivers_are_bounded_per_cluster(served: Served) -> None:
    with served.http() as http:
        r = http.post("/v1/clusters", content=SHOP)
        assert r.status_code == 202, r.text
        for i in range(2):
            body = {"name": f"hook-{i}", "cluster": "shop", "action": "scale_out"}
            assert http.post("/v1/receivers", json=body).status_code == 201
        body = {"name": "hook-2", "cluster": "shop", "action": "scale_out"}
        r = http.post("/v1/receivers", json=body)
        assert r.status_code == 409, r.text
        detail = r.json()["error"]["details"][0]
        assert (detail["path"], detail["limit"], detail["in_use"]) == ("/cluster", 2, 2)


def test_default_quotas_are_finite_for_tenants(served: Served) -> None:
    with served.http() as http:
        r = http.post("/v1/projects", json={"name": "tenant-q"})
        assert r.status_code == 201, r.text
        tenant = r.json()["project"]["id"]
        quotas = http.get(f"/v1/projects/{tenant}/quotas").json()["quotas"]
        assert (quotas["clusters"]["limit"], quotas["nodes"]["limit"]) == (100, 1000)
        mine = http.get("/v1/projects/admin/quotas").json()["quotas"]
        assert mine["clusters"]["limit"] == -1  # the operator's own project


def test_a_held_stream_still_sees_new_events(served: Served) -> None:
    """Held requests ask a shared newest-id first (api/watermark.py); new events still come."""
    with served.http() as http:
        newest = http.get("/v1/events?after=0&limit=10000").json()["next"]
    s = served.hold(f"/v1/events/stream?after={newest}")
    try:
        assert _status(s) == 200
        with served.http() as http:
            r = http.post("/v1/clusters", content=SHOP.replace("name: shop", "name: watched"))
            assert r.status_code == 202, r.text
        seen = b""
        deadline = time.monotonic() + 120
        while b"watched" not in seen:
            assert time.monotonic() < deadline, seen
            seen += s.recv(65536)
    finally:
        s.close()

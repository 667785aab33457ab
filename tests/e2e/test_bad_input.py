"""Bad input over HTTP: every refusal has the one error shape, the right status, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import StartServer
from tests.e2e.flows import NATIVE, TINY
from tests.support.server import assert_error, wait_ok

REPO = Path(__file__).resolve().parents[2]
LIMIT = 64 * 1024

BROKEN_YAML = """\
name: broken
node_groups:
  - name: web
    profile: {type: server, flavor: m9.huge, image: nope}
    count: -1
    countt: 3
groupings:
  - name: g
    members: [api]
    rule: anti-affinity
"""


class Recorder:
    """Wraps a client and remembers every response, so the test can say: never a 500."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.seen: list[httpx.Response] = []

    def __call__(self, method: str, url: str, **kw: Any) -> httpx.Response:
        r = self.client.request(method, url, **kw)
        self.seen.append(r)
        return r


def pointers(error: dict[str, Any]) -> set[str]:
    return {d["path"] for d in error["details"]}


def chunks(total: int, size: int = 4096) -> Iterator[bytes]:
    for _ in range(0, total, size):
        yield b"x" * size


def test_bad_input(start_server: StartServer) -> None:
    server = start_server(provider="sim", extra={"SHOAL_MAX_BODY_BYTES": str(LIMIT)})
    with server.client() as admin_client:
        call = Recorder(admin_client)

        # -- invalid documents: 422 with every problem's pointer ----------------------------
        e = assert_error(call("POST", "/v1/clusters", content=BROKEN_YAML), 422, "invalid_document")
        assert pointers(e) == {
            "/node_groups/0/profile/flavor",
            "/node_groups/0/profile/image",
            "/node_groups/0/count",
            "/node_groups/0/countt",
            "/groupings/0/members/0",
        }, e
        seed = (REPO / "tests" / "fixtures" / "vcluster-commenter.json").read_bytes()
        e = assert_error(call("POST", "/v2/admin/vclusters", content=seed), 422, "invalid_document")
        assert {
            "/vcluster/instances/0/spec/flavorRef",
            "/vcluster/instances/0/spec/imageRef",
            "/vcluster/instances/1/spec/size",
            "/vcluster/instances/2/spec/flavorRef",
            "/vcluster/instances/2/spec/imageRef",
            "/vcluster/instances/3/spec/size",
        } == pointers(e), e
        e = assert_error(call("POST", "/v1/clusters", content=b"{not json"), 422)
        assert "line 1" in e["details"][0]["message"], e
        assert_error(call("POST", "/v1/clusters", content=b""), 422)
        assert_error(call("POST", "/v1/clusters", content=b"\xff\xfe\x00garbage"), 422)
        assert call("GET", "/v1/clusters").json()["clusters"] == []

        # a real cluster to aim at
        r = call("POST", "/v1/clusters", json=NATIVE)
        wait_ok(admin_client, r)
        cid = r.json()["cluster"]["id"]
        action_id = r.json()["action"]["id"]
        node_id = call("GET", "/v1/nodes", params={"cluster": cid}).json()["nodes"][0]["id"]

        # a change that would leave the document invalid: pointers into the new document
        bad_group = {"name": "w", "profile": dict(TINY, flavor="nope"), "count": 1, "min": 3}
        e = assert_error(call("POST", f"/v1/clusters/{cid}/nodegroups", json=bad_group), 422)
        assert pointers(e) == {"/node_groups/2/profile/flavor", "/node_groups/2/count"}, e
        e = assert_error(call("PUT", f"/v1/clusters/{cid}", content=BROKEN_YAML), 422)
        assert len(e["details"]) == 5, e
        e = assert_error(
            call("PATCH", f"/v1/clusters/{cid}/nodegroups/web", json={"count": 2, "no": 1}),
            422,
        )
        assert pointers(e) == {"/no"}, e

        # -- malformed action bodies: 422 ---------------------------------------------------
        for body in (
            {"content": b"{{"},
            {"content": b"[1, 2]"},
            {"json": {}},
            {"json": {"explode": {}}},
            {"json": {"scale_out": {"count": 1}, "scale_in": {"count": 1}}},
            {"json": {"scale_out": {"count": 0, "nodegroup": "web"}}},
            {"json": {"scale_out": {"count": "many", "nodegroup": "web"}}},
            {"json": {"scale_out": {"count": 1, "nodegroup": "web", "extra": True}}},
            {"json": {"resize": {"adjustment_type": "SOMETIMES", "number": 1}}},
            {"json": {"del_nodes": {"nodes": []}}},
        ):
            assert_error(call("POST", f"/v1/clusters/{cid}/actions", **body), 422)
        assert_error(call("POST", f"/v1/clusters/{cid}/nodegroups", content=b"nope"), 422)
        # without naming one of several node groups; beyond a group's bounds
        e = assert_error(
            call("POST", f"/v1/clusters/{cid}/actions", json={"scale_out": {"count": 1}}), 422
        )
        assert pointers(e) == {"/nodegroup"}, e
        e = assert_error(
            call(
                "POST",
                f"/v1/clusters/{cid}/actions",
                json={"scale_in": {"count": 2, "nodegroup": "web"}},
            ),
            409,
            "conflict",
        )
        e = assert_error(
            call(
                "POST",
                f"/v1/clusters/{cid}/actions",
                json={"scale_out": {"count": 1, "nodegroup": "nope"}},
            ),
            404,
        )
        assert call("GET", f"/v1/clusters/{cid}").json()["cluster"]["action"] is None

        # -- unknown things: 404 ------------------------------------------------------------
        for method, url in (
            ("GET", "/v1/clusters/nope"),
            ("DELETE", "/v1/clusters/nope"),
            ("GET", "/v1/clusters/nope/nodegroups"),
            ("GET", f"/v1/clusters/{cid}/nodegroups/nope"),
            ("DELETE", f"/v1/clusters/{cid}/nodegroups/nope"),
            ("GET", "/v1/nodes/nope"),
            ("GET", "/v1/actions/nope"),
            ("GET", "/v2/admin/vclusters/nope"),
            ("GET", "/v2/nobody/vclusters"),
            ("GET", "/v1/nowhere"),
        ):
            assert_error(call(method, url), 404, "not_found")
        assert_error(
            call("POST", "/v1/clusters/nope/actions", json={"scale_out": {"count": 1}}), 404
        )
        assert_error(call("PUT", "/v1/clusters/nope", content=BROKEN_YAML.encode()), 422)
        assert_error(call("PATCH", "/v1/clusters"), 405)

        # -- tokens: 401 without a valid one ------------------------------------------------
        for headers in ({}, {"Authorization": "Bearer nope"}, {"X-Auth-Token": "nope"}):
            r = httpx.get(f"{server.url}/v1/clusters", headers=headers, trust_env=False)
            call.seen.append(r)
            assert_error(r, 401, "unauthorized")
            assert r.headers["WWW-Authenticate"] == "Bearer"

        # -- another tenant sees nothing of ours: 404 ---------------------------------------
        r = call("POST", "/v1/projects", json={"name": "other"})
        assert r.status_code == 201, r.text
        other_id, other_token = r.json()["project"]["id"], r.json()["token"]
        assert_error(call("POST", "/v1/projects", json={"name": "other"}), 409, "conflict")
        assert_error(call("POST", "/v1/projects", json={"name": "bad name!"}), 422)
        with server.client(other_token) as other_client:
            other = Recorder(other_client)
            assert other("GET", "/v1/clusters").json()["clusters"] == []
            for method, url in (
                ("GET", f"/v1/clusters/{cid}"),
                ("GET", "/v1/clusters/e2e-native"),
                ("DELETE", f"/v1/clusters/{cid}"),
                ("GET", f"/v1/clusters/{cid}/nodegroups"),
                ("GET", f"/v1/nodes/{node_id}"),
                ("GET", f"/v1/actions/{action_id}"),
                ("POST", f"/v1/actions/{action_id}/cancel"),
                ("GET", f"/v1/nodes?cluster={cid}"),
                ("GET", "/v2/admin/vclusters"),
            ):
                assert_error(other(method, url), 404, "not_found")
            assert_error(
                other("POST", f"/v1/clusters/{cid}/actions", json={"scale_in": {"count": 1}}),
                404,
            )
            assert other("GET", f"/v2/{other_id}/vclusters").json() == {"vclusters": []}
            assert_error(other("POST", "/v1/projects", json={"name": "mine"}), 403, "forbidden")
            call.seen.extend(other.seen)

        # -- bodies over the limit: 413, whether announced or streamed ----------------------
        big = b"#" * (LIMIT + 1)
        assert_error(call("POST", "/v1/clusters", content=big), 413, "too_large")
        assert_error(call("POST", "/v1/clusters", content=chunks(LIMIT * 2)), 413, "too_large")
        assert_error(call("POST", "/v2/admin/vclusters", content=big), 413, "too_large")
        assert_error(call("POST", f"/v1/clusters/{cid}/actions", content=chunks(LIMIT * 2)), 413)

        # the cluster came through all of that untouched
        c = call("GET", f"/v1/clusters/{cid}").json()["cluster"]
        assert c["status"] == "ACTIVE" and c["action"] is None, c
        assert len(call("GET", "/v1/actions", params={"cluster": cid}).json()["actions"]) == 1

    statuses = sorted({r.status_code for r in call.seen})
    assert all(s < 500 for s in statuses), statuses
    assert server.log_tail().count("Traceback") == 0, server.log_tail()

"""Side by side with Heat: a corpus template, given to Shoal on `local` as Heat would be given it.

`shoal up example-deploy-sequence.yaml -e local.yaml` (the heat-templates file as written; the
environment only sets a flavor and an image `local` has) brings up two servers, each running
Heat's real agent chain, and its three `script` deployments run in Heat's order, the second
taking the first's stdout as its input. Then server_a's host is lost (its process killed with
it): Shoal's manager replaces the server on another host and runs its deployments again on the
replacement, with no step by anyone. Heat would leave the dead server to an operator (see
docs/hot.md, "Side by side with Heat").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.cli.support import Shoal
from tests.e2e.conftest import StartServer, pg_url, start_server
from tests.e2e.flows import MANAGED
from tests.support.server import eventually, free_port

__all__ = ["pg_url", "start_server"]

DATA = Path(__file__).resolve().parents[2] / "data" / "hot"
TEMPLATE = (
    DATA
    / "heat-templates"
    / "hot"
    / "software-config"
    / "example-templates"
    / "example-deploy-sequence.yaml"
)
ENVIRONMENT = DATA / "side-by-side" / "local.yaml"
CLUSTER = "example-deploy-sequence"
TIMEOUT_S = 180.0


def rows(client: httpx.Client) -> list[dict[str, Any]]:
    r = client.get(f"/v1/clusters/{CLUSTER}/deployments")
    assert r.status_code == 200, r.text
    found: list[dict[str, Any]] = r.json()["deployments"]
    return found


def nodes(client: httpx.Client) -> dict[str, dict[str, Any]]:
    r = client.get("/v1/nodes", params={"cluster": CLUSTER})
    assert r.status_code == 200, r.text
    return {n["name"]: n for n in r.json()["nodes"]}


def shown(client: httpx.Client, node_id: str, deployment: str) -> dict[str, Any]:
    r = client.get(f"/v1/nodes/{node_id}/deployments/{deployment}")
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()["deployment"]
    return found


def answer(address: str) -> dict[str, Any] | None:
    """A local node's `GET /` (its name, pid, host), or None while it does not answer."""
    try:
        r = httpx.get(f"http://{address}/", timeout=5.0, trust_env=False)
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    body: dict[str, Any] = r.json()
    return body


def test_a_corpus_template_comes_up_and_heals_with_its_deployments(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(
        home=tmp_path / "home",
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
        extra=MANAGED,
    )
    cli_home = tmp_path / "cli"
    cli_home.mkdir()
    shoal = Shoal(cli_home, url=server.url, token=server.token)
    done = shoal.ok("up", str(TEMPLATE), "-e", str(ENVIRONMENT))
    assert f"cluster {CLUSTER}: ACTIVE" in done.stdout, done.stdout

    with server.client() as client:

        def complete(
            want: set[tuple[str, str]],
        ) -> dict[tuple[str, str], dict[str, Any]] | None:
            """Rows by (deployment, node id) once every wanted one is COMPLETE."""
            found = {(d["deployment"], d["node_id"]): d for d in rows(client)}
            assert all(d["status"] != "FAILED" for d in found.values()), (
                found,
                server.log_tail(),
            )
            done = want <= set(found) and all(found[k]["status"] == "COMPLETE" for k in want)
            return found if done else None

        before = nodes(client)
        assert sorted(before) == ["server_a", "server_b"]
        a_id, b_id = before["server_a"]["id"], before["server_b"]["id"]
        eventually(
            lambda: complete(
                {("deployment_a", a_id), ("deployment_b", b_id), ("deployment_c", a_id)}
            ),
            timeout_s=TIMEOUT_S,
            every_s=0.5,
        )
        # Heat's order and outputs: b ran with a's stdout as `previous`, c after b.
        first_a = shown(client, a_id, "deployment_a")
        assert first_a["stdout"].startswith("Previous: NONE\n"), first_a
        assert "deployment_a is running on" in first_a["stdout"]
        first_b = shown(client, b_id, "deployment_b")
        assert first_b["inputs"]["previous"] == first_a["stdout"], (first_b, first_a)
        assert first_b["stdout"].startswith(f"Previous: {first_a['stdout']}")
        first_c = shown(client, a_id, "deployment_c")
        assert first_c["stdout"].startswith("Previous: deployment_b\n"), first_c
        listed = {(d["deployment"], d["node_id"]): d for d in rows(client)}
        assert (
            listed[("deployment_b", b_id)]["ended_at"]
            <= (listed[("deployment_c", a_id)]["started_at"])
        )

        # server_a's host is lost and its process with it; nobody does anything after this.
        old = answer(before["server_a"]["address"])
        assert old is not None and old["name"].endswith("server_a"), old
        lost = before["server_a"]["host"]
        assert client.post(f"/v1/hosts/{lost}/fail").status_code == 200
        eventually(lambda: answer(before["server_a"]["address"]) is None, timeout_s=30)

        def replaced() -> dict[str, Any] | None:
            now = nodes(client).get("server_a")
            if now is None or now["id"] == a_id or now["status"] != "ACTIVE":
                return None
            return now if now["host"] != lost else None

        new = eventually(replaced, timeout_s=TIMEOUT_S, every_s=0.5)
        eventually(
            lambda: complete({("deployment_a", new["id"]), ("deployment_c", new["id"])}),
            timeout_s=TIMEOUT_S,
            every_s=0.5,
        )
        again_a = shown(client, new["id"], "deployment_a")
        assert again_a["action"] == "CREATE" and again_a["status"] == "COMPLETE", again_a
        assert again_a["stdout"].startswith("Previous: NONE\n"), again_a
        again_c = shown(client, new["id"], "deployment_c")
        assert again_c["stdout"].startswith("Previous: deployment_b\n"), again_c
        assert answer(new["address"]) is not None
        assert nodes(client)["server_b"]["id"] == b_id  # untouched
        assert client.post(f"/v1/hosts/{lost}/recover").status_code == 200

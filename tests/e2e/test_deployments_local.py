"""Software deployments end to end on `local`, with Heat's real agent chain on every server.

One Shoal server process (`tests/support/serve.py`); each server it creates runs
os-collect-config -> os-refresh-config -> heat-config -> the `script` hook -> heat-config-notify
(installed by `make venv`), polling the metadata Shoal serves and POSTing its signals back. The
document: two app servers and a load balancer whose backends are the app group's addresses.
Then a host is lost: the app server on it is replaced elsewhere, its deployment runs there, and
the balancer's deployment re-runs UPDATE with the new address; no manual step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.e2e.conftest import StartServer
from tests.e2e.flows import MANAGED
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 120.0
DOC = """
name: ctl
node_groups:
  - name: app
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
    min: 1
    max: 4
groupings:
  - {name: apart, members: [app], rule: anti-affinity}
instances:
  - name: lb
    profile: {type: server, flavor: m1.tiny, image: cirros}
    depends_on: [app]
software:
  configs:
    app:
      group: script
      inputs: [bind]
      outputs: [endpoint]
      config: |
        #!/bin/sh
        echo "app on $bind" > "$SHOAL_NODE_WORKDIR/app.txt"
        printf 'http://%s/' "$bind" > "$heat_outputs_path.endpoint"
    lb:
      group: script
      inputs: [{name: endpoints, type: CommaDelimitedList}]
      config: |
        #!/bin/sh
        echo "$endpoints" > "$SHOAL_NODE_WORKDIR/backends.txt"
        echo "rendered $deploy_action"
  deployments:
    app:
      config: app
      target: app
      inputs: {bind: {node: address}}
    lb:
      config: lb
      target: lb
      inputs: {endpoints: {output: app.endpoint, from: all}}
"""


def deployments(client: httpx.Client) -> dict[tuple[str, str], dict[str, Any]]:
    r = client.get("/v1/clusters/ctl/deployments")
    assert r.status_code == 200, r.text
    return {(d["deployment"], d["node"]): d for d in r.json()["deployments"]}


def nodes(client: httpx.Client) -> dict[str, dict[str, Any]]:
    r = client.get("/v1/nodes", params={"cluster": "ctl"})
    assert r.status_code == 200, r.text
    return {n["name"]: n for n in r.json()["nodes"]}


def written(home: Path, node: dict[str, Any], name: str) -> str | None:
    for f in home.rglob(name):
        if str(node["physical_id"]) in str(f):
            return f.read_text()
    return None


def test_deployments_follow_a_replaced_node(start_server: StartServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = start_server(
        home=home,
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
        extra=MANAGED,
    )
    with server.client() as client:
        r = client.post("/v1/clusters", content=DOC)
        wait_ok(client, r)

        def all_complete(count: int) -> dict[tuple[str, str], dict[str, Any]] | None:
            found = deployments(client)
            statuses = [d["status"] for d in found.values()]
            assert "FAILED" not in statuses, (found, server.log_tail())
            return found if len(found) == count and set(statuses) == {"COMPLETE"} else None

        first = eventually(lambda: all_complete(3), timeout_s=TIMEOUT_S, every_s=0.5)
        before = nodes(client)
        for name in ("app-1", "app-2"):
            assert written(home, before[name], "app.txt") == f"app on {before[name]['address']}\n"
        rendered = written(home, before["lb"], "backends.txt") or ""
        assert before["app-1"]["address"] in rendered and before["app-2"]["address"] in rendered
        r = client.get(f"/v1/nodes/{before['lb']['id']}/deployments/lb")
        assert r.status_code == 200 and "rendered CREATE" in r.json()["deployment"]["stdout"]
        assert first[("lb", "lb")]["action"] == "CREATE"

        # The host of app-2 is lost: app-2 is replaced elsewhere, with its deployment, and the
        # balancer re-renders with the new address.
        lost = before["app-2"]["host"]
        assert client.post(f"/v1/hosts/{lost}/fail").status_code == 200

        def moved() -> dict[str, dict[str, Any]] | None:
            now = nodes(client)
            app2 = now.get("app-2")
            if app2 is None or app2["host"] == lost or app2["status"] != "ACTIVE":
                return None
            d = deployments(client)
            lb = d.get(("lb", "lb"))
            app = d.get(("app", "app-2"))
            if not lb or not app or lb["action"] != "UPDATE" or lb["status"] != "COMPLETE":
                return None
            return now if app["status"] == "COMPLETE" else None

        after = eventually(moved, timeout_s=TIMEOUT_S, every_s=0.5)
        new = after["app-2"]
        assert new["address"] != before["app-2"]["address"]
        assert written(home, new, "app.txt") == f"app on {new['address']}\n"
        rendered = written(home, after["lb"], "backends.txt") or ""
        assert new["address"] in rendered and before["app-2"]["address"] not in rendered
        assert before["app-1"]["address"] in rendered
        r = client.get(f"/v1/nodes/{after['lb']['id']}/deployments/lb")
        assert "rendered UPDATE" in r.json()["deployment"]["stdout"]
        assert client.post(f"/v1/hosts/{lost}/recover").status_code == 200


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "controller"


def test_the_controller_example_in_both_environments(
    start_server: StartServer, tmp_path: Path
) -> None:
    """Seed 003's case: one document, `-e ha.yaml` (three controllers) or `-e single.yaml`
    (one), each deployed in order by the real agents; the balancer lists every controller."""
    document = yaml.safe_load((EXAMPLE / "controller.yaml").read_text())
    server = start_server(
        home=tmp_path / "home",
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
    )
    with server.client() as client:
        for env, controllers in (("ha.yaml", 3), ("single.yaml", 1)):
            environment = yaml.safe_load((EXAMPLE / env).read_text())
            r = client.post(
                "/v1/clusters", json={"document": document, "environment": [environment]}
            )
            wait_ok(client, r)
            cid = r.json()["cluster"]["id"]

            def complete(cid: str = cid, n: int = controllers) -> list[dict[str, Any]] | None:
                got = client.get(f"/v1/clusters/{cid}/deployments").json()["deployments"]
                assert all(d["status"] != "FAILED" for d in got), (got, server.log_tail())
                done = len(got) == n + 2 and all(d["status"] == "COMPLETE" for d in got)
                return got if done else None

            found = eventually(complete, timeout_s=TIMEOUT_S, every_s=0.5)
            assert sorted({d["deployment"] for d in found}) == ["api", "balancer", "database"]
            ended = {d["deployment"]: d["ended_at"] for d in found}
            assert ended["database"] <= min(
                d["started_at"] for d in found if d["deployment"] == "api"
            )
            listed = client.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]
            addresses = {n["address"] for n in listed if n["name"].startswith("controller")}
            assert len(addresses) == controllers
            lb = next(d for d in found if d["deployment"] == "balancer")
            r = client.get(f"/v1/nodes/{lb['node_id']}/deployments/balancer")
            assert r.status_code == 200, r.text
            backends = r.json()["deployment"]["inputs"]["backends"]
            assert set(backends) == addresses, (backends, addresses)
            # What the deployments wrote is what the nodes answer (the node serves www/).
            by_id = {n["id"]: n for n in listed}
            lb_page = httpx.get(
                f"http://{by_id[lb['node_id']]['address']}/www/index.html", timeout=30
            )
            assert lb_page.status_code == 200, lb_page.text
            for address in addresses:
                assert f"server {address}\n" in lb_page.text, lb_page.text
                page = httpx.get(f"http://{address}/www/index.html", timeout=30)
                assert page.text.startswith(f"api on {address} using db://"), page.text
            db = next(d for d in found if d["deployment"] == "database")
            shown = client.get(f"/v1/nodes/{db['node_id']}/deployments/database").json()
            assert shown["deployment"]["inputs"]["password"] == "******"
            assert client.delete(f"/v1/clusters/{cid}").status_code == 202

            def gone(cid: str = cid) -> bool:
                return client.get(f"/v1/clusters/{cid}").status_code == 404

            eventually(gone, timeout_s=TIMEOUT_S)

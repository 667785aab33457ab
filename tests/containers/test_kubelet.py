"""`group: kubelet` on `local`: heat-agents writes the Pod manifest, Shoal's kubelet stand-in
plays it with podman (hostNetwork, the node's own address) and signals the outcome; a changed
manifest replaces the pod; an image the node has not fails with the image's name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import containers, podman
from tests.containers.conftest import IMAGE, StartServer
from tests.support.netns import in_namespace, node_namespace
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 120.0


def _doc(text: str, image: str = IMAGE) -> str:
    return f"""
name: pods
instances:
  - name: web
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
software:
  configs:
    web:
      group: kubelet
      config: |
        apiVersion: v1
        kind: Pod
        metadata: {{name: web}}
        spec:
          hostNetwork: true
          restartPolicy: Always
          containers:
          - name: httpd
            image: {image}
            command:
            - /bin/sh
            - -c
            - >-
              echo {text} > /www/index.html &&
              exec /bin/httpd -f -p ${{SHOAL_NODE_ADDRESS}}:18081 -h /www
  deployments:
    web: {{config: web, target: web}}
"""


def _settled(client: httpx.Client, name: str) -> dict[str, Any] | None:
    r = client.get(f"/v1/clusters/{name}/deployments")
    assert r.status_code == 200, r.text
    found = r.json()["deployments"]
    if found and all(d["status"] in ("COMPLETE", "FAILED") for d in found):
        return {d["deployment"]: d for d in found}
    return None


def _get(url: str) -> str | None:
    try:
        r = httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None
    return r.text if r.status_code == 200 else None


def test_a_pod_is_played_replaced_and_a_missing_image_named(
    home: Path, start_server: StartServer
) -> None:
    server = start_server(
        home=home, provider="local", provider_options={"port": free_port(), "agent_poll_s": 1.0}
    )
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=_doc("one")))
        done = eventually(lambda: _settled(client, "pods"), timeout_s=TIMEOUT_S, every_s=0.5)
        assert done["web"]["status"] == "COMPLETE", done
        node = client.get("/v1/nodes", params={"cluster": "pods"}).json()["nodes"][0]
        address = node["address"].split(":")[0]
        url = f"http://{address}:18081/"
        assert eventually(lambda: _get(url), timeout_s=30) == "one\n"
        # The pod's containers run in their node's own network (issue 39), not the host's.
        store = podman.node_store(home / "local", home / "local" / "nodes" / node["physical_id"])
        pids = containers.run(podman.Podman.find(), store, "ps", "--format", "{{.Pid}}").split()
        assert pids and all(
            in_namespace(int(p), node_namespace(home, node["physical_id"])) for p in pids
        )

        # A changed manifest replaces the pod (same name, new content).
        wait_ok(client, client.put("/v1/clusters/pods", content=_doc("two")))
        eventually(lambda: _get(url) == "two\n", timeout_s=TIMEOUT_S, every_s=0.5)

        # An image this node has not: the deployment fails, naming it (no registry, no hang).
        missing = "localhost/busybox:missing"
        wait_ok(client, client.put("/v1/clusters/pods", content=_doc("three", missing)))

        def failed() -> str | None:
            r = client.get(f"/v1/nodes/{node['id']}/deployments/web")
            d = r.json()["deployment"]
            return d["stderr"] if d["status"] == "FAILED" else None

        reason = eventually(failed, timeout_s=TIMEOUT_S, every_s=0.5)
        assert missing in reason, reason

"""`shoal image import`: a root filesystem from busybox-static, imported once into the home's
image store, is listed by every node's store; bad input is a 4xx naming the field; a project
that is not admin may neither import images nor run containers on `local`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shoal.providers.local import containers, images, podman
from tests.containers.conftest import StartServer
from tests.support.server import free_port

COMPOSE = """
name: box
instances:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
software:
  configs:
    web:
      group: docker-compose
      config: |
        web: {image: localhost/web:1, net: host, command: /bin/httpd -f}
  deployments:
    web: {config: web, target: web}
"""


def test_shoal_image_import_serves_every_node(
    home: Path, start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(home=home, provider="local", provider_options={"port": free_port()})
    rootfs = images.busybox_rootfs(tmp_path / "web")
    env = {**os.environ, "SHOAL_URL": server.url, "SHOAL_TOKEN": server.token}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "shoal",
            "image",
            "import",
            str(rootfs),
            "--name",
            "localhost/web:1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "localhost/web:1" in done.stdout
    found = podman.Podman.find()
    for node in ("srv-a", "srv-b"):
        store = podman.node_store(home / "local", home / "local" / "nodes" / node)
        store.write(found)
        listed = containers.run(found, store, "images", "--format", "{{.Repository}}:{{.Tag}}")
        assert "localhost/web:1" in listed, listed
        containers.remove_all(found, store)

    with server.client() as client:
        r = client.post("/v1/images", json={"path": "relative/dir", "name": "localhost/x:1"})
        assert r.status_code == 422 and r.json()["error"]["details"][0]["path"] == "/path"
        r = client.post("/v1/images", json={"path": str(rootfs), "name": "Bad Name"})
        assert r.status_code == 422 and r.json()["error"]["details"][0]["path"] == "/name"
        r = client.post("/v1/images", json={"path": str(tmp_path / "nothing")})
        assert r.status_code == 422, r.text

        # A project that is not admin: no imports, and no containers on local (the socket is
        # root-equivalent) unless the operator says so; nothing was created.
        r = client.post("/v1/projects", json={"name": "tenant"})
        assert r.status_code == 201, r.text
        tenant = {"Authorization": f"Bearer {r.json()['token']}"}
        r = client.post("/v1/images", json={"path": str(rootfs)}, headers=tenant)
        assert r.status_code == 403, r.text
        r = client.post("/v1/clusters", content=COMPOSE, headers=tenant)
        assert r.status_code == 403, r.text
        error = r.json()["error"]
        assert "local_containers_all_projects" in error["message"]
        assert error["details"][0]["path"] == "/software/configs/web/group"
        assert client.get("/v1/clusters/box").status_code == 404

"""A tenant's node against a real `shoal server` on `local` (issue 29): its deployment script,
run by Heat's real agents under bubblewrap, tries to read the admin token and the database,
other nodes' files and their metadata URLs, and fails; a node that swaps its log or www/ for a
symlink gets a 404; a deleted node's metadata URL answers 404; nothing under $SHOAL_HOME is
readable by group or others.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import StartServer
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 120.0
VICTIM_SECRET = "victim-secret-4f2a"

VICTIM = f"""
name: victim
parameters:
  db_password: {{type: string, hidden: true, default: {VICTIM_SECRET}}}
node_groups:
  - name: db
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
    count: 1
software:
  configs:
    db:
      group: script
      inputs: [password]
      config: |
        #!/bin/sh
        echo "db ready"
  deployments:
    db:
      config: db
      target: db
      inputs: {{password: {{secret: db_password}}}}
"""

PROBE = """
name: probe
parameters:
  home: {type: string}
node_groups:
  - name: p
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
software:
  configs:
    probe:
      group: script
      inputs: [home]
      config: |
        #!/bin/sh
        for f in "$home/admin-token" "$home/shoal.db" "$home/server.log"; do
          if cat "$f" >/dev/null 2>&1; then echo "READ $f"; else echo "DENIED $f"; fi
        done
        echo "NODES $(ls -d "$home"/local/nodes/*/ 2>/dev/null | wc -l)"
        echo "PROCS $(ls -d /proc/[0-9]* | wc -l)"
        urls=$(cat "$home"/local/nodes/*/agents/etc/os-collect-config.conf /proc/*/cmdline \\
          /proc/*/environ "$home"/local/resources/* 2>/dev/null \\
          | grep -ao 'http://[^ "]*/metadata?token=[0-9a-f]*' | sort -u)
        echo "URLS $(echo "$urls" | grep -c metadata)"
        fetch='import sys, urllib.request as u; print(u.urlopen(sys.argv[1]).read().decode())'
        for url in $urls; do python3 -c "$fetch" "$url"; done
  deployments:
    probe:
      config: probe
      target: p
      inputs: {home: {param: home}}
"""


def deployments(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    r = client.get(f"/v1/clusters/{cluster}/deployments")
    assert r.status_code == 200, r.text
    found: list[dict[str, Any]] = r.json()["deployments"]
    return found


def complete(client: httpx.Client, cluster: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        found = deployments(client, cluster)
        return found[0] if found and found[0]["status"] in ("COMPLETE", "FAILED") else None

    found: dict[str, Any] = eventually(done, timeout_s=TIMEOUT_S, every_s=0.5)
    return found


def node_of(client: httpx.Client, cluster: str) -> dict[str, Any]:
    [node] = client.get("/v1/nodes", params={"cluster": cluster}).json()["nodes"]
    return dict(node)


def metadata_url(home: Path, physical_id: str) -> str:
    conf = home / "local" / "nodes" / physical_id / "agents" / "etc" / "os-collect-config.conf"
    found = re.search(r"metadata_url = (\S+)", conf.read_text())
    assert found is not None
    return found.group(1).replace("$$", "$")


def test_a_hostile_node_reaches_nothing_of_the_server(
    start_server: StartServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    server = start_server(
        home=home,
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
    )
    token = server.token
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=VICTIM))
        victim_run = complete(client, "victim")
        assert victim_run["status"] == "COMPLETE", victim_run
        probe = PROBE.replace("home: {type: string}", f"home: {{type: string, default: '{home}'}}")
        wait_ok(client, client.post("/v1/clusters", content=probe))
        run = complete(client, "probe")
        node = node_of(client, "probe")
        r = client.get(f"/v1/nodes/{node['id']}/deployments/probe")
        assert r.status_code == 200, r.text
        out = r.json()["deployment"]["stdout"]
        assert run["status"] == "COMPLETE", (run, r.text)
        lines = out.splitlines()
        assert [x for x in lines if x.startswith("READ ")] == [], out
        assert len([x for x in lines if x.startswith("DENIED ")]) == 3, out
        assert token not in out and VICTIM_SECRET not in out, out
        assert "NODES 1" in lines, out  # its own directory only
        assert "URLS 1" in lines, out  # its own metadata URL only (and it reads its own)

        # Nothing under the home is for group or others (the agents' tree included).
        found = subprocess.run(
            ["find", str(home), "-mindepth", "1", "-perm", "/077", "!", "-type", "l"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert found == [], "\n".join(found)

        # A node that swaps its log or www/ for a link to the admin token gets a 404.
        workdir = home / "local" / "nodes" / str(node["physical_id"])
        (workdir / "node.log").unlink()
        (workdir / "node.log").symlink_to(home / "admin-token")
        r = client.get(f"/v1/nodes/{node['id']}/log")
        assert r.status_code == 404 and token not in r.text, r.text
        (workdir / "www").mkdir(mode=0o700, exist_ok=True)
        (workdir / "www").rename(workdir / "www.old")
        (workdir / "www").symlink_to(home, target_is_directory=True)
        page = httpx.get(f"http://{node['address']}/www/admin-token", timeout=30)
        assert page.status_code == 404 and token not in page.text, page.text

        # A deleted node's metadata URL answers 404 at once, never its secrets.
        victim = node_of(client, "victim")
        url = metadata_url(home, str(victim["physical_id"]))
        assert httpx.get(url, timeout=30).status_code == 200
        wait_ok(client, client.delete("/v1/clusters/victim"))
        gone = httpx.get(url, timeout=30)
        assert gone.status_code == 404 and VICTIM_SECRET not in gone.text, gone.text

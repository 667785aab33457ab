"""End to end on real Nova and Cinder: a Shoal server process with the `openstack` provider.

As an admin (PostgreSQL store): the seed's vcluster is created, every grouping is checked
against where Nova put the servers and which server each Cinder volume is attached to; a node
group is added and scaled out and in; a server deleted behind Shoal's back is made again on
its host with its volume; deleting the cluster leaves nothing in Nova or Cinder.

As a tenant (no admin role): Shoal places at zone level and Nova's server groups hold the
host-level rules; Nova's own placement is checked, and the groups go with the cluster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.e2e.conftest import StartServer, pg_url, start_server
from tests.e2e.flows import (
    MANAGED,
    TINY,
    check_vcluster_placement,
    create_vcluster,
    get_cluster,
    node_list,
    scale,
)
from tests.nova.conftest import Cloud
from tests.support.server import eventually, wait_ok

__all__ = ["pg_url", "start_server"]  # fixtures, imported for pytest


@pytest.fixture
def nova_admin(cloud: Cloud) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=cloud.nova.url,
        headers={"OpenStack-API-Version": "compute 2.74"},
        timeout=30,
    ) as client:
        yield client


@pytest.fixture
def cinder(cloud: Cloud) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=cloud.cinder.url, headers={"OpenStack-API-Version": "volume 3.0"}, timeout=30
    ) as client:
        yield client


def options(cloud: Cloud, compute: str, mode: str) -> dict[str, Any]:
    return {
        "auth_type": "none",
        "compute_endpoint": compute,
        "block_storage_endpoint": cloud.cinder.url,
        "network": "none",
        "mode": mode,
        "poll_interval_s": 0.2,
        "boot_timeout_s": 120,
    }


def nova_servers(nova: httpx.Client, cluster_id: str) -> dict[str, dict[str, Any]]:
    """Shoal's servers of one cluster as Nova lists them, by id."""
    tag = quote(f"shoal-cluster:{cluster_id}")
    r = nova.get(f"/servers/detail?tags={tag}")
    assert r.status_code == 200, r.text
    return {s["id"]: s for s in r.json()["servers"]}


def cinder_volumes(cinder: httpx.Client, cluster_id: str) -> dict[str, dict[str, Any]]:
    query = quote(json.dumps({"shoal_cluster": cluster_id}))
    r = cinder.get(f"/volumes/detail?metadata={query}")
    assert r.status_code == 200, r.text
    return {
        v["id"]: v
        for v in r.json()["volumes"]
        if (v.get("metadata") or {}).get("shoal_cluster") == cluster_id
    }


def attached_server(volume: dict[str, Any]) -> str | None:
    attachments = volume.get("attachments") or []
    return str(attachments[0]["server_id"]) if attachments else None


def test_seed_vcluster_on_nova_and_cinder_as_admin(
    cloud: Cloud,
    pg_url: str,
    start_server: StartServer,
    nova_admin: httpx.Client,
    cinder: httpx.Client,
) -> None:
    server = start_server(
        provider="openstack",
        provider_options=options(cloud, cloud.nova.url, "admin"),
        database_url=pg_url,
        extra=MANAGED,
    )
    with server.client() as client:
        vc = create_vcluster(client)
        cid = vc["id"]
        inst = check_vcluster_placement(vc)
        nodes = {n["name"]: n for n in node_list(client, cid)}

        # Where Nova says the servers are is where Shoal placed them: apart (group-3).
        servers = nova_servers(nova_admin, cid)
        assert len(servers) == 2
        for name in ("db-server-1", "db-server-2"):
            s = servers[nodes[name]["physical_id"]]
            assert s["status"] == "ACTIVE"
            assert s["OS-EXT-SRV-ATTR:host"] == inst[name]["host"]
            assert s["OS-EXT-AZ:availability_zone"] == nodes[name]["zone"]
        hosts = {s["OS-EXT-SRV-ATTR:host"] for s in servers.values()}
        assert len(hosts) == 2
        # Each volume is a real Cinder volume attached to its own server (group-1, group-2).
        volumes = cinder_volumes(cinder, cid)
        assert len(volumes) == 2
        for vol, srv in (("db-vol-1", "db-server-1"), ("db-vol-2", "db-server-2")):
            v = volumes[nodes[vol]["physical_id"]]
            assert v["status"] == "in-use" and v["size"] == 20
            assert attached_server(v) == nodes[srv]["physical_id"]

        # Scale: a node group of two, out by two, in by one.
        r = client.post(
            f"/v1/clusters/{cid}/nodegroups",
            json={"name": "web", "profile": TINY, "count": 2, "min": 0, "max": 6},
        )
        wait_ok(client, r)
        scale(client, cid, "scale_out", 2, "web")
        scale(client, cid, "scale_in", 1, "web")
        everything = node_list(client, cid)
        web = [n for n in everything if n["group"] == "web"]
        assert len(web) == 3 and all(n["status"] == "ACTIVE" for n in web)
        servers = nova_servers(nova_admin, cid)
        assert set(servers) == {n["physical_id"] for n in everything if n["kind"] == "server"}
        for n in web:
            assert servers[n["physical_id"]]["OS-EXT-SRV-ATTR:host"] == n["host"]

        # A server deleted behind Shoal's back comes back on its host, its volume attached.
        lost = nodes["db-server-1"]
        assert nova_admin.delete(f"/servers/{lost['physical_id']}").status_code == 204

        def remade() -> dict[str, Any] | None:
            now = {n["name"]: n for n in node_list(client, cid)}
            n = now["db-server-1"]
            if n["physical_id"] in (None, lost["physical_id"]) or n["status"] != "ACTIVE":
                return None
            vol = now["db-vol-1"]
            got = cinder.get(f"/volumes/{vol['physical_id']}").json()["volume"]
            return n if attached_server(got) == n["physical_id"] else None

        again = eventually(remade, timeout_s=90)
        s = nova_admin.get(f"/servers/{again['physical_id']}").json()["server"]
        assert s["status"] == "ACTIVE"
        assert s["OS-EXT-SRV-ATTR:host"] == lost["host"]
        old = nova_admin.get(f"/servers/{lost['physical_id']}")
        assert old.status_code == 404 or old.json()["server"]["status"] == "DELETED"

        # Deleting the cluster (once the repair action has closed) leaves nothing behind.
        eventually(lambda: get_cluster(client, cid)["status"] == "ACTIVE", timeout_s=60)
        r = client.delete(f"/v1/clusters/{cid}")
        assert r.status_code == 202, r.text
        wait_ok(client, r)
    assert nova_servers(nova_admin, cid) == {}
    assert cinder_volumes(cinder, cid) == {}


TENANT_DOC: dict[str, Any] = {
    "name": "tenant-mode",
    "node_groups": [
        {"name": "web", "profile": TINY, "count": 3, "min": 0, "max": 6, "zones": ["az1"]},
        {"name": "cache", "profile": TINY, "count": 2, "min": 0, "max": 2, "zones": ["az2"]},
    ],
    "groupings": [
        {"name": "web-apart", "members": ["web"], "rule": "anti-affinity", "scope": "host"},
        {"name": "cache-together", "members": ["cache"], "rule": "affinity", "scope": "host"},
    ],
}


def test_as_a_tenant_novas_server_groups_hold_the_rules(
    cloud: Cloud, start_server: StartServer, nova_admin: httpx.Client
) -> None:
    server = start_server(
        provider="openstack", provider_options=options(cloud, cloud.tenant_url, "auto")
    )
    with server.client() as client:
        r = client.get("/v1/hosts")
        assert r.status_code == 200, r.text
        hosts = {h["name"] for h in r.json()["hosts"]}
        assert "az1.slot01" in hosts and not any(h.startswith("host0") for h in hosts)

        r = client.post("/v1/clusters", json=TENANT_DOC)
        assert r.status_code == 202, r.text
        cid = r.json()["cluster"]["id"]
        wait_ok(client, r)
        cluster = get_cluster(client, cid)
        assert cluster["status"] == "ACTIVE", cluster
        nodes = node_list(client, cid)
        by_id = {n["physical_id"]: n for n in nodes}

        servers = nova_servers(nova_admin, cid)
        assert set(servers) == set(by_id)
        where: dict[str, list[str]] = {"web": [], "cache": []}
        for sid, s in servers.items():
            where[by_id[sid]["group"]].append(s["OS-EXT-SRV-ATTR:host"])
            assert s["OS-EXT-AZ:availability_zone"] == by_id[sid]["zone"]
        assert len(set(where["web"])) == 3, where
        assert len(set(where["cache"])) == 1, where

        groups = {
            g["name"]: g
            for g in nova_admin.get("/os-server-groups?all_projects=true").json()["server_groups"]
        }
        apart = groups[f"shoal-{cid}-web-apart"]
        together = groups[f"shoal-{cid}-cache-together"]
        assert apart["policy"] == "anti-affinity" and together["policy"] == "affinity"
        assert sorted(apart["members"]) == sorted(
            n["physical_id"] for n in nodes if n["group"] == "web"
        )
        assert len(together["members"]) == 2

        r = client.delete(f"/v1/clusters/{cid}")
        assert r.status_code == 202, r.text
        wait_ok(client, r)
    assert nova_servers(nova_admin, cid) == {}
    left = nova_admin.get("/os-server-groups?all_projects=true").json()["server_groups"]
    assert not [g["name"] for g in left if cid in g["name"]]

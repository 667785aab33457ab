"""The import against a real Nova: servers booted in Nova as Senlin's engine booted them (no
Shoal tag), Senlin's rows naming them; the import adopts each with the host and zone Nova
reports, and Nova's server list is the same before and after (no create, delete or rebuild),
also after a management pass of Shoal's engine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from shoal.engine.manager import Manager
from shoal.providers.registry import make_provider
from shoal.runtime import Runtime
from shoal.service.senlin_import import SenlinImport
from shoal.settings import Settings
from shoal.store import actions as action_repo
from tests.nova.conftest import Peer, start_nova
from tests.senlin_import.harness import SenlinDb
from tests.senlin_import.scenario import NOVA, Writer

HEADERS = {"OpenStack-API-Version": "compute 2.74"}


@pytest.fixture(scope="module")
def nova(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    peer = start_nova(tmp_path_factory.mktemp("nova"), hosts=4, zones=2)
    try:
        yield peer
    finally:
        peer.stop()


def nova_servers(nova: Peer) -> list[tuple[str, str, str, str]]:
    """Every server as Nova lists it: id, status, host, and when it was last updated."""
    r = httpx.get(f"{nova.url}/servers/detail", headers=HEADERS, timeout=30)
    r.raise_for_status()
    return sorted(
        (s["id"], s["status"], s["OS-EXT-SRV-ATTR:host"], s["updated"]) for s in r.json()["servers"]
    )


async def boot_as_senlin(nova: Peer, name: str, host: str, zone: str) -> str:
    """A server booted the way Senlin's os.nova.server profile boots one: Senlin's metadata,
    no Shoal tag."""
    async with httpx.AsyncClient(base_url=nova.url, headers=HEADERS, timeout=30) as http:
        flavors = (await http.get("/flavors")).json()["flavors"]
        images = (
            await http.get("/images", headers={"OpenStack-API-Version": "compute 2.35"})
        ).json()
        body = {
            "server": {
                "name": name,
                "flavorRef": next(f["id"] for f in flavors if f["name"] == "m1.tiny"),
                "imageRef": next(i["id"] for i in images["images"] if i["name"] == "cirros"),
                "availability_zone": f"{zone}:{host}",
                "networks": "none",
                "metadata": {"cluster_node_id": name, "cluster_node_index": "1"},
            }
        }
        r = await http.post("/servers", json=body)
        assert r.status_code == 202, r.text
        server_id: str = r.json()["server"]["id"]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        while True:
            s: dict[str, Any] = (await http.get(f"/servers/{server_id}")).json()["server"]
            if s["status"] == "ACTIVE":
                return server_id
            assert s["status"] != "ERROR" and loop.time() < deadline, s
            await asyncio.sleep(0.2)


async def test_import_adopts_nova_servers_with_zero_writes(
    nova: Peer, senlin_db: SenlinDb, tmp_path: Path
) -> None:
    placed = {"web-1": ("host001", "az1"), "web-2": ("host002", "az2"), "web-3": ("host003", "az1")}
    ids = {n: await boot_as_senlin(nova, n, h, z) for n, (h, z) in placed.items()}
    provider = make_provider(
        "openstack",
        home=tmp_path,
        options={"auth_type": "none", "compute_endpoint": nova.url, "network": "none"},
    )
    settings = Settings(home=tmp_path / "home", provider="openstack", manage=False)
    rt = await Runtime.open(settings, provider=provider)
    try:
        w = Writer(senlin_db, rt.provider, rt.inventory)
        w.profile("nova", NOVA)
        cid = w.cluster("web", "nova", desired=3, min_size=1, max_size=5)
        for i, name in enumerate(placed, start=1):
            await w.node(name, "web", "nova", i, host=None, physical_id=ids[name])
        senlin_db.flush()
        before = nova_servers(nova)

        importer = SenlinImport(rt.db, rt.provider, rt.service, rt.engine.inventory_now, rt.clock)
        report = (await importer.run(senlin_db.url, None, dry_run=False)).to_json()
        (web,) = report["clusters"]
        assert web["outcome"] == "import", web
        assert {n["physical_id"]: (n["host"], n["zone"]) for n in web["nodes"]} == {
            ids[n]: hz for n, hz in placed.items()
        }
        assert nova_servers(nova) == before  # Nova: nothing created, deleted or touched

        manager = Manager(rt.engine.context, reconcile_s=0.0)
        await manager.tick()  # untagged servers are asked for by id, not taken for gone
        await manager.close()
        with rt.db.reading() as conn:
            assert action_repo.list_actions(conn, None, cluster_id=cid) == []
        assert nova_servers(nova) == before
    finally:
        await rt.close()

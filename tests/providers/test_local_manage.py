"""Active management on the local provider: reboot, rebuild, host loss, and honest states."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from shoal.model.catalogs import CLASSIC_FLAVORS
from shoal.model.enums import NodeKind
from shoal.model.inventory import Image
from shoal.providers.base import HostAdmin, HostState, ResourceState
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.local import LocalProvider
from shoal.providers.local.options import LocalOptions

from .support import (
    get_json,
    http_get,
    pid_alive,
    profile,
    server_request,
    volume_request,
    web_image,
    with_images,
)

pytestmark = pytest.mark.asyncio


async def test_reboot_keeps_the_address_and_disk_with_a_new_process(local: LocalProvider) -> None:
    server = await local.create_server(server_request("r", "az1-host1"))
    volume = await local.create_volume(volume_request("data", "az1-host1"))
    await local.attach_volume(volume.id, server.id)
    workdir = Path(server.details["workdir"])
    (workdir / "scratch").write_text("kept")
    old_pid = int(server.details["pid"])

    rebooted = await local.reboot(server.id)

    assert (rebooted.id, rebooted.key, rebooted.address) == (server.id, "r", server.address)
    assert rebooted.state is ResourceState.ACTIVE
    new_pid = int(rebooted.details["pid"])
    assert new_pid != old_pid and not pid_alive(old_pid)
    view = await get_json(rebooted.address or "")
    assert view["pid"] == new_pid and view["node_id"] == "r"
    assert [v["name"] for v in view["volumes"]] == ["data"]
    assert (workdir / "scratch").read_text() == "kept"
    assert "task" not in rebooted.details

    # A crashed server is simply started again.
    await local.kill_node_process(server.id)
    assert (await local.get(NodeKind.SERVER, server.id)).state is ResourceState.ERROR
    again = await local.reboot(server.id)
    assert again.state is ResourceState.ACTIVE and again.address == server.address
    assert (await http_get(again.address or "", "/health")) == (200, b"ok")

    with pytest.raises(ResourceGone):
        await local.reboot("srv-nope")
    with pytest.raises(ResourceGone):
        await local.reboot(volume.id)


async def test_a_server_reads_building_while_it_reboots(local: LocalProvider) -> None:
    server = await local.create_server(server_request("b", "az1-host1"))
    task = asyncio.create_task(local.reboot(server.id))
    seen = set()
    while not task.done():
        now = await local.get(NodeKind.SERVER, server.id)
        seen.add((now.state, now.details.get("task")))
        await asyncio.sleep(0.01)
    assert (await task).state is ResourceState.ACTIVE
    assert (ResourceState.BUILDING, "rebooting") in seen
    assert all(state is not ResourceState.ERROR for state, _ in seen)


async def test_rebuild_with_a_command_image_keeps_address_and_volume(
    local_home: Path, port: int
) -> None:
    web = web_image()
    local = LocalProvider(local_home, with_images(web), LocalOptions(port=port, boot_timeout_s=30))
    server = await local.create_server(server_request("w", "az2-host2"))
    volume = await local.create_volume(volume_request("data", "az2-host2"))
    await local.attach_volume(volume.id, server.id)
    (Path(volume.details["path"]) / "blob").write_text("precious")
    workdir = Path(server.details["workdir"])
    (workdir / "scratch").write_text("wiped")
    old_pid = int(server.details["pid"])
    medium = CLASSIC_FLAVORS[2]

    rebuilt = await local.rebuild(server.id, profile(web, medium))

    assert (rebuilt.id, rebuilt.address, rebuilt.state) == (
        server.id,
        server.address,
        ResourceState.ACTIVE,
    )
    assert rebuilt.details["image"] == "web" and rebuilt.details["flavor"] == "m1.medium"
    assert not pid_alive(old_pid)
    status, listing = await http_get(rebuilt.address or "")  # http.server lists its workdir
    assert status == 200 and b"volumes/" in listing and b"scratch" not in listing
    assert not (workdir / "scratch").exists()
    link = workdir / "volumes" / "data"
    assert Path(os.readlink(link)) == Path(volume.details["path"])
    assert (await http_get(rebuilt.address or "", "/volumes/data/blob")) == (200, b"precious")
    assert (await local.get(NodeKind.VOLUME, volume.id)).attached_to == server.id

    # And back to the built-in node: it sees the volume again.
    back = await local.rebuild(server.id, profile())
    assert back.details["image"] == "cirros" and back.address == server.address
    view = await get_json(back.address or "")
    assert [v["name"] for v in view["volumes"]] == ["data"]

    # A new provider on the same home knows the image the server now runs.
    assert (
        await LocalProvider(local_home, None, LocalOptions(port=port)).get(
            NodeKind.SERVER, server.id
        )
    ).details["image"] == "cirros"


async def test_rebuild_to_an_unknown_image_changes_nothing(local: LocalProvider) -> None:
    server = await local.create_server(server_request("u", "az1-host1"))
    with pytest.raises(PermanentError, match="ghost"):
        await local.rebuild(server.id, profile(Image("nope", "ghost")))
    now = await local.get(NodeKind.SERVER, server.id)
    assert now.state is ResourceState.ACTIVE and now.details["pid"] == server.details["pid"]
    with pytest.raises(ResourceGone):
        await local.rebuild("srv-nope", profile())


async def test_a_rebuild_whose_image_fails_leaves_the_server_in_error(
    local_home: Path, port: int
) -> None:
    broken = Image("img-broken", "broken", properties={"command": "/nonexistent/program"})
    local = LocalProvider(
        local_home, with_images(broken), LocalOptions(port=port, boot_timeout_s=30)
    )
    server = await local.create_server(server_request("f", "az1-host1"))
    with pytest.raises(PermanentError, match="could not start"):
        await local.rebuild(server.id, profile(broken))
    now = await local.get(NodeKind.SERVER, server.id)
    assert now.state is ResourceState.ERROR and now.details["image"] == "broken"
    assert not pid_alive(int(server.details["pid"]))
    fixed = await local.rebuild(server.id, profile())
    assert fixed.state is ResourceState.ACTIVE and fixed.address == server.address


async def test_several_reboots_and_rebuilds_at_once(local: LocalProvider) -> None:
    hosts = [h.name for h in (await local.inventory()).hosts]
    servers = await asyncio.gather(
        *(local.create_server(server_request(f"m{i}", hosts[i % 6])) for i in range(8))
    )
    results = await asyncio.gather(
        *(local.reboot(s.id) for s in servers[:4]),
        *(local.rebuild(s.id, profile()) for s in servers[4:]),
        local.reboot(servers[0].id),  # the same server twice: one after the other
    )
    assert all(r.state is ResourceState.ACTIVE for r in results)
    assert [r.address for r in results[:8]] == [s.address for s in servers]
    old = {s.details["pid"] for s in servers}
    assert not old & {r.details["pid"] for r in results}
    views = await asyncio.gather(*(get_json(s.address or "") for s in servers))
    assert [v["name"] for v in views] == [f"m{i}" for i in range(8)]
    assert all(not pid_alive(int(pid)) for pid in old)


async def test_fail_host_kills_that_host_only_and_recovers(
    local: LocalProvider, local_home: Path, port: int
) -> None:
    assert isinstance(local, HostAdmin)
    lost = [await local.create_server(server_request(f"l{i}", "az1-host2")) for i in range(2)]
    volume = await local.create_volume(volume_request("v", "az1-host2"))
    kept = await local.create_server(server_request("k", "az1-host3"))

    ids = await local.fail_host("az1-host2")

    assert sorted(ids) == sorted([lost[0].id, lost[1].id, volume.id])
    assert all(not pid_alive(int(s.details["pid"])) for s in lost)
    assert pid_alive(int(kept.details["pid"]))
    assert await local.fail_host("az1-host2") == ids  # again: harmless
    inventory = await local.inventory()
    assert "az1-host2" not in [h.name for h in inventory.hosts]
    assert len(inventory.hosts) == 5
    other = LocalProvider(
        local_home, None, LocalOptions(port=port)
    )  # another Shoal process on the same home
    assert "az1-host2" not in [h.name for h in (await other.inventory()).hosts]
    states = {h.name: h for h in await local.hosts()}
    assert states["az1-host2"] == HostState("az1-host2", "az1", True, 3)
    assert states["az1-host3"] == HostState("az1-host3", "az1", False, 1)
    assert states["az2-host1"] == HostState("az2-host1", "az2", False, 0)
    with pytest.raises(ResourceGone, match="down"):
        await local.reboot(lost[0].id)
    with pytest.raises(ResourceGone, match="down"):
        await local.rebuild(lost[0].id, profile())
    with pytest.raises(PermanentError, match="no host"):
        await local.fail_host("az9-host9")

    await local.recover_host("az1-host2")

    assert "az1-host2" in [h.name for h in (await other.inventory()).hosts]
    assert not {h.name: h for h in await local.hosts()}["az1-host2"].failed
    listed = {r.id: r.state for r in await local.list_resources("c1")}
    assert listed[lost[0].id] is ResourceState.ERROR
    assert listed[volume.id] is ResourceState.ACTIVE
    assert listed[kept.id] is ResourceState.ACTIVE
    back = await local.reboot(lost[0].id)
    assert back.state is ResourceState.ACTIVE and back.address == lost[0].address


async def test_states_after_kill_workdir_removal_and_volume_dir_removal(
    local: LocalProvider,
) -> None:
    killed = await local.create_server(server_request("killed", "az1-host1", cluster="s"))
    orphan = await local.create_server(server_request("orphan", "az1-host1", cluster="s"))
    volume = await local.create_volume(volume_request("vol", "az1-host1", cluster="s"))
    await local.attach_volume(volume.id, orphan.id)
    gone_volume = await local.create_volume(volume_request("gone", "az1-host1", cluster="s"))

    await local.kill_node_process(killed.id)
    shutil.rmtree(orphan.details["workdir"])  # behind Shoal's back; its process still runs
    shutil.rmtree(gone_volume.details["path"])

    now = {r.id: r for r in await local.list_resources("s")}
    assert set(now) == {killed.id, orphan.id, volume.id, gone_volume.id}
    assert now[killed.id].state is ResourceState.ERROR
    assert now[killed.id].details["reason"] == "process is not running"
    assert now[orphan.id].state is ResourceState.MISSING
    assert now[orphan.id].details["reason"] == "workdir is gone"
    assert now[volume.id].state is ResourceState.ACTIVE
    assert now[gone_volume.id].state is ResourceState.MISSING
    assert now[gone_volume.id].details["reason"] == "directory is gone"
    for r in now.values():
        assert (await local.get(r.kind, r.id)).state is r.state

    # Nothing to reboot without a disk; a create with its key makes it again in place.
    with pytest.raises(ResourceGone, match="workdir"):
        await local.reboot(orphan.id)
    again = await local.create_server(server_request("orphan", "az1-host1", cluster="s"))
    assert (again.id, again.address, again.state) == (
        orphan.id,
        orphan.address,
        ResourceState.ACTIVE,
    )
    assert not pid_alive(int(orphan.details["pid"]))  # the leftover process was stopped
    assert [v["name"] for v in (await get_json(again.address or ""))["volumes"]] == ["vol"]

    # A killed server on a failed host reads MISSING, ERROR again once the host is back.
    await local.fail_host("az1-host1")
    assert (await local.get(NodeKind.SERVER, killed.id)).state is ResourceState.MISSING
    await local.recover_host("az1-host1")
    assert (await local.get(NodeKind.SERVER, killed.id)).state is ResourceState.ERROR


async def test_a_lost_workdir_is_made_again_by_rebuild(local: LocalProvider) -> None:
    server = await local.create_server(server_request("x", "az2-host1"))
    volume = await local.create_volume(volume_request("d", "az2-host1"))
    await local.attach_volume(volume.id, server.id)
    await local.kill_node_process(server.id)
    shutil.rmtree(server.details["workdir"])
    rebuilt = await local.rebuild(server.id, profile())
    assert rebuilt.state is ResourceState.ACTIVE and rebuilt.address == server.address
    assert [v["name"] for v in (await get_json(rebuilt.address or ""))["volumes"]] == ["d"]


async def test_a_create_with_a_known_key_restarts_a_dead_process(
    local: LocalProvider, local_home: Path
) -> None:
    server = await local.create_server(server_request("k", "az2-host3"))
    await local.kill_node_process(server.id)
    revived = await local.create_server(server_request("k", "az2-host3"))
    assert (revived.id, revived.address, revived.state) == (
        server.id,
        server.address,
        ResourceState.ACTIVE,
    )
    assert revived.details["pid"] != server.details["pid"]
    records = [json.loads(p.read_text()) for p in (local_home / "resources").glob("*.json")]
    assert [r["pid"] for r in records] == [int(revived.details["pid"])]

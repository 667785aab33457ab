"""The local provider's servers: real processes answering HTTP on their own loopback address."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from shoal.model.catalogs import CIRROS
from shoal.model.enums import NodeKind
from shoal.model.inventory import Image
from shoal.providers.base import Provider, ResourceState
from shoal.providers.errors import PermanentError, TemporaryError
from shoal.providers.local import LocalProvider
from shoal.providers.local.options import LocalOptions

from .support import (
    get_json,
    http_get,
    pid_alive,
    processes_with_key,
    server_request,
    web_image,
    with_images,
)

pytestmark = pytest.mark.asyncio


async def test_is_a_provider(local: LocalProvider) -> None:
    assert isinstance(local, Provider)
    inventory = await local.inventory()
    assert [h.name for h in inventory.hosts][:2] == ["az1-host1", "az1-host2"]


async def test_three_servers_on_three_hosts_answer_on_their_own_addresses(
    local: LocalProvider, port: int
) -> None:
    hosts = ["az1-host1", "az1-host2", "az2-host3"]
    servers = await asyncio.gather(
        *(local.create_server(server_request(f"node-{i}", h)) for i, h in enumerate(hosts))
    )
    # 127.<zone>.<host>.<slot>: the slot is the first free one machine-wide (tests beside this
    # one hold theirs), so only the zone and host parts are fixed.
    prefixes = ["127.1.1.", "127.1.2.", "127.2.3."]
    expected = [ip_of(s.address) for s in servers]
    for ip, prefix in zip(expected, prefixes, strict=True):
        assert ip.startswith(prefix) and int(ip.rsplit(".", 1)[1]) >= 2
    assert [s.address for s in servers] == [f"{ip}:{port}" for ip in expected]
    for i, (server, host) in enumerate(zip(servers, hosts, strict=True)):
        assert server.state is ResourceState.ACTIVE
        assert server.host == host and server.zone == host[:3]
        assert server.address is not None
        view = await get_json(server.address)
        assert view["name"] == f"node-{i}"
        assert view["node_id"] == f"node-{i}"
        assert (view["address"], view["port"]) == (expected[i], port)
        assert (view["host"], view["zone"]) == (host, host[:3])
        assert view["volumes"] == []
        assert view["pid"] == int(server.details["pid"])
        assert await http_get(server.address, "/health") == (200, b"ok")


async def test_two_servers_on_one_host_take_their_own_slots(local: LocalProvider) -> None:
    a = await local.create_server(server_request("a", "az2-host1"))
    b = await local.create_server(server_request("b", "az2-host1"))
    a_ip, b_ip = ip_of(a.address), ip_of(b.address)
    assert a_ip.startswith("127.2.1.") and b_ip.startswith("127.2.1.")
    assert a_ip != b_ip


def ip_of(address: str | None) -> str:
    assert address is not None
    return address.rsplit(":", 1)[0]


async def test_create_is_idempotent_by_key(local: LocalProvider) -> None:
    first, again = await asyncio.gather(
        local.create_server(server_request("same", "az1-host1")),
        local.create_server(server_request("same", "az1-host1")),
    )
    third = await local.create_server(server_request("same", "az1-host1"))
    assert first.id == again.id == third.id
    assert first.details["pid"] == third.details["pid"]
    assert processes_with_key("same") == [int(first.details["pid"])]
    assert len(await local.list_resources()) == 1


async def test_many_concurrent_creates(local: LocalProvider) -> None:
    hosts = [h.name for h in (await local.inventory()).hosts]
    servers = await asyncio.gather(
        *(local.create_server(server_request(f"n{i}", hosts[i % 6])) for i in range(24))
    )
    assert all(s.state is ResourceState.ACTIVE for s in servers)
    assert len({s.address for s in servers}) == 24
    views = await asyncio.gather(*(get_json(s.address or "") for s in servers))
    assert [v["name"] for v in views] == [f"n{i}" for i in range(24)]


async def test_delete_stops_the_process_and_removes_its_directory(local: LocalProvider) -> None:
    server = await local.create_server(server_request("gone", "az1-host2"))
    pid = int(server.details["pid"])
    workdir = Path(server.details["workdir"])
    assert pid_alive(pid) and workdir.is_dir()
    await local.delete(NodeKind.SERVER, server.id)
    assert not pid_alive(pid)
    assert not workdir.exists()
    assert (await local.get(NodeKind.SERVER, server.id)).state is ResourceState.MISSING
    await local.delete(NodeKind.SERVER, server.id)  # already gone: still fine
    assert await local.list_resources() == []
    again = await local.create_server(server_request("after", "az1-host2"))
    assert again.address == server.address  # the slot was freed


async def test_unknown_image_is_permanent(local: LocalProvider) -> None:
    ghost = Image("no-such-id", "ghost")
    with pytest.raises(PermanentError, match="ghost"):
        await local.create_server(server_request("x", "az1-host1", image=ghost))
    assert await local.list_resources() == []


async def test_unknown_host_is_permanent(local: LocalProvider) -> None:
    with pytest.raises(PermanentError, match="no valid host"):
        await local.create_server(server_request("x", "az9-host9"))


async def test_an_image_command_runs_any_program(local_home: Path, port: int) -> None:
    web = web_image()
    provider = LocalProvider(
        local_home, with_images(web), LocalOptions(port=port, boot_timeout_s=30)
    )
    server = await provider.create_server(server_request("web-1", "az2-host2", image=web))
    assert server.address == f"127.2.2.2:{port}"
    status, body = await http_get(server.address)
    assert status == 200 and b"node.log" in body  # it serves its workdir
    again = LocalProvider(local_home, with_images(web), LocalOptions(port=port))
    assert (await again.get(NodeKind.SERVER, server.id)).state is ResourceState.ACTIVE
    pid = int(server.details["pid"])
    await again.delete(NodeKind.SERVER, server.id)
    assert not pid_alive(pid)


async def test_early_exit_is_permanent_with_the_log_tail(local_home: Path, port: int) -> None:
    python = shlex.quote(sys.executable)
    broken = Image(
        "img-broken",
        "broken",
        properties={"command": f"{python} -c \"import sys; print('boom'); sys.exit(3)\""},
    )
    provider = LocalProvider(local_home, with_images(broken), LocalOptions(port=port))
    with pytest.raises(PermanentError) as caught:
        await provider.create_server(server_request("b", "az1-host1", image=broken))
    assert "boom" in (caught.value.fault or "")
    assert await provider.list_resources() == []
    assert list((local_home / "nodes").iterdir()) == []


async def test_missing_program_is_permanent(local_home: Path, port: int) -> None:
    absent = Image("img-absent", "absent", properties={"command": "/nonexistent/program {port}"})
    provider = LocalProvider(local_home, with_images(absent), LocalOptions(port=port))
    with pytest.raises(PermanentError, match="could not start"):
        await provider.create_server(server_request("a", "az1-host1", image=absent))


async def test_builtin_image_by_id_or_name(local: LocalProvider) -> None:
    by_name = Image("other-id", CIRROS.name)
    server = await local.create_server(server_request("n", "az1-host3", image=by_name))
    assert server.details["image"] == "cirros"


async def test_a_server_that_never_answers_times_out_and_is_killed(
    local_home: Path, port: int
) -> None:
    python = shlex.quote(sys.executable)
    mute = Image(
        "img-mute",
        "mute",
        properties={"command": f'{python} -c "import time; time.sleep(120)" {{name}}'},
    )
    provider = LocalProvider(
        local_home, with_images(mute), LocalOptions(port=port, boot_timeout_s=0.5)
    )
    with pytest.raises(TemporaryError, match="did not answer"):
        await provider.create_server(server_request("mute-7f3a", "az1-host1", image=mute))
    assert processes_with_key("mute-7f3a") == []
    assert await provider.list_resources() == []

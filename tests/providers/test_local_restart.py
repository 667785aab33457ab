"""The local provider after a Shoal restart, and when hosts or processes are lost."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shoal.model.enums import NodeKind
from shoal.providers.base import ResourceState
from shoal.providers.errors import PermanentError
from shoal.providers.local import LocalProvider
from shoal.providers.local.options import LocalOptions
from shoal.providers.local.records import file_name

from .support import get_json, pid_alive, server_request, volume_request

pytestmark = pytest.mark.asyncio

GONE = (ResourceState.MISSING, ResourceState.ERROR)


async def test_a_new_provider_readopts_and_notices_a_lost_process(
    local: LocalProvider, local_home: Path, port: int
) -> None:
    a = await local.create_server(server_request("a", "az1-host1", cluster="blue"))
    b = await local.create_server(server_request("b", "az2-host1", cluster="blue"))
    await local.close()

    restarted = LocalProvider(local_home, None, LocalOptions(port=port))
    assert (await restarted.get(NodeKind.SERVER, a.id)).state is ResourceState.ACTIVE
    listed = {r.id: r.state for r in await restarted.list_resources("blue")}
    assert listed == {a.id: ResourceState.ACTIVE, b.id: ResourceState.ACTIVE}
    assert await restarted.list_resources("green") == []

    await restarted.kill_node_process(b.id)
    assert not pid_alive(int(b.details["pid"]))
    assert (await restarted.get(NodeKind.SERVER, b.id)).state in GONE
    assert (
        await LocalProvider(local_home, None, LocalOptions(port=port)).get(NodeKind.SERVER, b.id)
    ).state in GONE

    # Creating it again with its key starts it again: same id and address, a new process.
    revived = await restarted.create_server(server_request("b", "az2-host1", cluster="blue"))
    assert (revived.id, revived.address) == (b.id, b.address)
    assert revived.state is ResourceState.ACTIVE
    assert revived.details["pid"] != b.details["pid"]
    assert (await get_json(revived.address or ""))["name"] == "b"


async def test_a_recycled_pid_is_not_mistaken_for_the_node(
    local: LocalProvider, local_home: Path
) -> None:
    server = await local.create_server(server_request("n", "az1-host1"))
    await local.kill_node_process(server.id)
    record = local_home / "resources" / file_name(NodeKind.SERVER, "n")
    data = json.loads(record.read_text())
    data["pid"] = os.getpid()  # a live process that is not the node
    record.write_text(json.dumps(data))
    assert (await local.get(NodeKind.SERVER, server.id)).state is ResourceState.ERROR
    await local.delete(NodeKind.SERVER, server.id)  # must not signal this test process
    assert pid_alive(os.getpid())


async def test_fail_host_kills_its_processes_and_hides_it(local: LocalProvider) -> None:
    lost = [await local.create_server(server_request(f"l{i}", "az1-host2")) for i in range(2)]
    kept = await local.create_server(server_request("k", "az2-host2"))
    volume = await local.create_volume(volume_request("v", "az1-host2"))

    await local.fail_host("az1-host2")

    for server in lost:
        assert not pid_alive(int(server.details["pid"]))
        assert (await local.get(NodeKind.SERVER, server.id)).state is ResourceState.MISSING
    assert (await local.get(NodeKind.VOLUME, volume.id)).state is ResourceState.MISSING
    assert (await local.get(NodeKind.SERVER, kept.id)).state is ResourceState.ACTIVE
    assert "az1-host2" not in [h.name for h in (await local.inventory()).hosts]
    with pytest.raises(PermanentError, match="no valid host"):
        await local.create_server(server_request("new", "az1-host2"))

    await local.recover_host("az1-host2")
    assert "az1-host2" in [h.name for h in (await local.inventory()).hosts]
    assert (await local.get(NodeKind.SERVER, lost[0].id)).state is ResourceState.ERROR
    assert (await local.get(NodeKind.VOLUME, volume.id)).state is ResourceState.ACTIVE
    back = await local.create_server(server_request("l0", "az1-host2"))
    assert back.id == lost[0].id and back.state is ResourceState.ACTIVE

"""A server the openstack provider boots for software deployments, against a real Nova: what
Nova holds (its user data) is enough for Heat's agents to find Shoal's metadata and run.

The guest is a stand-in (tests/providers/guest.py): Nova's harness runs fake-virt computes, so
the agent chain runs as a local process fed with the user data read back from Nova's API.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.nova.conftest import Peer
from tests.nova.test_provider import nova_get
from tests.providers.agent_stub import AgentStub, agent_stub
from tests.providers.guest import standin_guest

from shoal.model.enums import NodeKind
from shoal.model.profile import ServerProfile
from shoal.model.software import (
    ConfigOutput,
    DeployAction,
    HookGroup,
    ResolvedDeployment,
    SoftwareConfig,
)
from shoal.providers.base import ResourceState, ServerRequest
from shoal.providers.local.agents import AgentInstall
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.registry import make_provider

HOSTNAME = SoftwareConfig(
    "whoami",
    HookGroup.SCRIPT,
    '#!/bin/sh\necho "deployed to $deploy_server_id"\nprintf ok > "$heat_outputs_path.state"\n',
    outputs=(ConfigOutput("state"),),
)


@pytest.fixture
def stub() -> Iterator[AgentStub]:
    with agent_stub() as s:
        yield s


@pytest.fixture
async def provider(nova: Peer, tmp_path: Any) -> AsyncIterator[OpenStackProvider]:
    p = make_provider(
        "openstack",
        home=tmp_path,
        options={
            "auth_type": "none",
            "compute_endpoint": nova.url,
            "network": "none",
            "poll_interval_s": 0.2,
            "boot_timeout_s": 120,
            "agent_poll_s": 0.5,
        },
    )
    assert isinstance(p, OpenStackProvider)
    try:
        yield p
    finally:
        await p.close()


async def test_what_nova_holds_brings_the_agents_to_shoal(
    provider: OpenStackProvider, nova: Peer, stub: AgentStub, tmp_path: Path
) -> None:
    install = AgentInstall.find()
    inv = await provider.inventory()
    flavor, image = inv.flavor("m1.tiny"), inv.image("cirros")
    assert flavor is not None and image is not None
    key = str(uuid.uuid4())
    req = ServerRequest(
        key,
        "sw-0",
        "c-agents",
        "host001",
        "az1",
        ServerProfile(flavor, image),
        metadata_url=stub.metadata_url,
    )
    made = await provider.create_server(req)
    assert made.state is ResourceState.ACTIVE
    try:
        server = nova_get(nova, f"/servers/{made.id}")["server"]
        user_data = server["OS-EXT-SRV-ATTR:user_data"]
        assert user_data, "Nova holds no user data for the server"
        stub.server_id = made.id
        run = ResolvedDeployment("whoami", "sw-0", DeployAction.CREATE, HOSTNAME, {}, digest="1")
        stub.deployments = [run]
        with standin_guest(user_data, tmp_path / "guest", install) as guest:
            assert guest.metadata_url == stub.metadata_url
            assert guest.polling_interval_s == 0.5
            signal = await stub.wait_signal(run)
        assert signal.status_code == 0
        assert signal.stdout == f"deployed to {made.id}\n"
        assert dict(signal.outputs) == {"state": "ok"}
    finally:
        await provider.delete(NodeKind.SERVER, made.id)


async def test_a_server_without_deployments_gets_no_user_data(
    provider: OpenStackProvider, nova: Peer
) -> None:
    inv = await provider.inventory()
    flavor, image = inv.flavor("m1.tiny"), inv.image("cirros")
    assert flavor is not None and image is not None
    req = ServerRequest(
        str(uuid.uuid4()), "plain-0", "c-agents", "host002", "az2", ServerProfile(flavor, image)
    )
    made = await provider.create_server(req)
    try:
        server = nova_get(nova, f"/servers/{made.id}")["server"]
        assert not server.get("OS-EXT-SRV-ATTR:user_data")
    finally:
        await provider.delete(NodeKind.SERVER, made.id)

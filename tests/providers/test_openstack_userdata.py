"""The openstack provider's user data drives a guest's real Heat agents to Shoal's metadata.

Without a cloud: the user data `agent_user_data` builds (what the provider sends Nova, see
tests/nova/test_agents.py for the round trip through a real Nova) boots a stand-in guest
(guest.py), whose real heat_local collector and os-apply-config templates must produce a
collector configuration polling the metadata URL; its agent chain then runs a deployment.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.model.heat_agent import CollectorSettings
from shoal.model.software import DeployAction, HookGroup, ResolvedDeployment, SoftwareConfig
from shoal.providers.local.agents import AgentInstall
from shoal.providers.openstack.userdata import (
    CFN_INIT_DATA,
    MAX_USER_DATA_BYTES,
    agent_cloud_config,
    agent_user_data,
)

from .agent_stub import AgentStub, agent_stub
from .guest import standin_guest

ECHO = SoftwareConfig("echo", HookGroup.SCRIPT, "#!/bin/sh\necho booted from user data\n")


@pytest.fixture
def stub() -> Iterator[AgentStub]:
    with agent_stub() as s:
        yield s


def test_user_data_is_a_cloud_config_writing_the_boot_metadata() -> None:
    settings = CollectorSettings("http://shoal.example/v1/metadata/n1?secret=abc", 10.0)
    text = base64.b64decode(agent_user_data(settings)).decode()
    assert text == agent_cloud_config(settings)
    assert text.startswith("#cloud-config\n")
    (item,) = json.loads(text.split("\n", 1)[1])["write_files"]
    assert item["path"] == CFN_INIT_DATA and item["permissions"] == "0600"
    assert json.loads(item["content"]) == {
        "deployments": [],
        "os-collect-config": {
            "collectors": ["ec2", "request", "local"],
            "polling_interval": 10.0,
            "request": {"metadata_url": "http://shoal.example/v1/metadata/n1?secret=abc"},
        },
    }


def test_user_data_is_bounded() -> None:
    with pytest.raises(ValueError, match="at most"):
        agent_user_data(CollectorSettings("http://x/" + "a" * MAX_USER_DATA_BYTES))


@pytest.mark.asyncio
async def test_a_guest_booted_from_the_user_data_runs_deployments(
    stub: AgentStub, tmp_path: Path
) -> None:
    install = AgentInstall.find()
    user_data = agent_user_data(CollectorSettings(stub.metadata_url, polling_interval=0.5))
    echo = ResolvedDeployment("echo", "vm-0", DeployAction.CREATE, ECHO, {}, digest="1")
    stub.deployments = [echo]
    with standin_guest(user_data, tmp_path / "guest", install) as guest:
        # What the image's own template made of the boot metadata: Heat's collectors for a
        # polled URL, and Shoal's URL.
        assert guest.collectors == ["ec2", "request", "local"]
        assert guest.metadata_url == stub.metadata_url
        assert guest.polling_interval_s == 0.5
        signal = await stub.wait_signal(echo)
    assert (signal.status_code, signal.stdout) == (0, "booted from user data\n")

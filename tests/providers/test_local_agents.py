"""Heat's real agent chain on local servers: os-collect-config polls the metadata Shoal serves,
heat-config runs the `script` hook, heat-config-notify POSTs the result to the signal URL.

The programs are the PyPI releases and heat-agents' sdist hooks `make venv` installs
(scripts/agents.sh); these tests fail, not skip, without them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio

from shoal.model.enums import NodeKind
from shoal.model.heat_agent import failure_reason
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    DeployAction,
    HookGroup,
    ResolvedDeployment,
    SoftwareConfig,
)
from shoal.providers.base import ServerRequest
from shoal.providers.errors import PermanentError
from shoal.providers.local import LocalProvider
from shoal.providers.local.agents import AgentInstall, AgentLayout, prepare
from shoal.providers.local.options import LocalOptions
from tests.support.polling import until

from .agent_stub import AgentStub, agent_stub
from .support import (
    http_get,
    pid_alive,
    processes_with_key,
    server_request,
    web_image,
    with_images,
)

HELLO = SoftwareConfig(
    name="hello",
    group=HookGroup.SCRIPT,
    config="""#!/bin/sh
set -e
echo "hello $who from $SHOAL_NODE_NAME"
echo "a warning" >&2
printf 'greeting for %s' "$who" > "$heat_outputs_path.greeting"
printf '%s' "$who" > "$SHOAL_NODE_WORKDIR/who.txt"
""",
    inputs=(ConfigInput("who"),),
    outputs=(ConfigOutput("greeting"),),
)


def hello(who: str = "world", action: DeployAction = DeployAction.CREATE) -> ResolvedDeployment:
    return ResolvedDeployment(
        deployment="hello",
        node="web-0",
        action=action,
        config=HELLO,
        inputs={"who": who},
        digest=f"digest-{who}",
    )


@pytest.fixture(scope="module")
def installed() -> AgentInstall:
    return AgentInstall.find()  # fails with "run make venv" when the agents are missing


@pytest.fixture
def stub() -> Iterator[AgentStub]:
    with agent_stub() as s:
        yield s


@pytest_asyncio.fixture
async def web(local_home: Path, port: int, installed: AgentInstall) -> AsyncIterator[LocalProvider]:
    yield LocalProvider(
        local_home,
        with_images(web_image()),
        LocalOptions(
            port=port,
            boot_timeout_s=30.0,
            stop_grace_s=2.0,
            agent_install=installed,
            agent_poll_s=0.5,
        ),
    )


def web_request(stub: AgentStub) -> ServerRequest:
    """A server of the web image (serves its workdir) whose agents poll the stub."""
    return replace(
        server_request("web-0", "az1-host1", image=web_image()), metadata_url=stub.metadata_url
    )


async def test_script_deployment_runs_and_its_outputs_come_back(
    web: LocalProvider, stub: AgentStub
) -> None:
    stub.deployments = [hello()]
    request = web_request(stub)
    server = await web.create_server(request)
    assert "agent_pid" in server.details

    signal = await stub.wait_signal(hello())
    assert signal.status_code == 0
    assert signal.stdout == "hello world from web-0\n"
    assert signal.stderr == "a warning\n"
    assert dict(signal.outputs) == {"greeting": "greeting for world"}
    assert failure_reason(signal, HELLO) is None
    # The script ran for the server: what it wrote is what the server now serves.
    assert server.address is not None
    assert await http_get(server.address, "/who.txt") == (200, b"world")


async def test_a_failing_script_signals_its_status_code_and_stderr(
    web: LocalProvider, stub: AgentStub
) -> None:
    broken = replace(
        hello(),
        deployment="broken",
        config=replace(HELLO, name="broken", config="#!/bin/sh\necho boom >&2\nexit 3\n"),
    )
    stub.deployments = [broken]
    request = web_request(stub)
    await web.create_server(request)
    signal = await stub.wait_signal(broken)
    assert (signal.status_code, signal.stderr) == (3, "boom\n")
    assert failure_reason(signal, broken.config) == (
        "Deployment exited with non-zero status code: 3"
    )


async def test_changed_inputs_run_again_and_a_reboot_runs_nothing_twice(
    web: LocalProvider, stub: AgentStub
) -> None:
    first = hello("world")
    stub.deployments = [first]
    request = web_request(stub)
    server = await web.create_server(request)
    await stub.wait_signal(first)

    # The same deployment with another input value is a new run (UPDATE, new id).
    second = hello("shoal", DeployAction.UPDATE)
    stub.deployments = [second]
    assert (await stub.wait_signal(second)).outputs["greeting"] == "greeting for shoal"

    # A reboot restarts the agents; what was deployed stays deployed (kept on the "disk"),
    # so the next new run is signalled and the earlier ones were not run again before it.
    old_agent = int(server.details["agent_pid"])
    server = await web.reboot(server.id)
    assert int(server.details["agent_pid"]) != old_agent
    third = replace(hello("again", DeployAction.UPDATE), deployment="later")
    stub.deployments = [second, third]
    await stub.wait_signal(third)
    assert len(stub.signals_for(first)) == 1
    assert len(stub.signals_for(second)) == 1
    assert server.address is not None
    assert await http_get(server.address, "/who.txt") == (200, b"again")


async def test_agents_stop_with_their_server(web: LocalProvider, stub: AgentStub) -> None:
    stub.deployments = [hello()]
    request = web_request(stub)
    server = await web.create_server(request)
    agent = int(server.details["agent_pid"])
    await stub.wait_signal(hello())

    await web.kill_node_process(server.id)  # a crash of the machine takes its agents too
    assert not pid_alive(agent)
    server = await web.create_server(request)  # started again in place, agents with it
    agent = int(server.details["agent_pid"])
    assert pid_alive(agent)

    await web.delete(NodeKind.SERVER, server.id)
    assert not pid_alive(agent)


async def test_agents_die_with_a_server_process_killed_behind_shoals_back(
    web: LocalProvider, stub: AgentStub
) -> None:
    """A crash of the server (here SIGKILL of its process, not through the provider) takes its
    agents down too: a dead server must not go on running and signalling deployments."""
    stub.deployments = [hello()]
    server = await web.create_server(web_request(stub))
    await stub.wait_signal(hello())
    agent = int(server.details["agent_pid"])
    os.kill(int(server.details["pid"]), signal.SIGKILL)
    await until(lambda: not pid_alive(agent), f"the agent chain {agent} to end", every_s=0.05)
    assert processes_with_key(server.key) == []


async def test_no_metadata_url_no_agents(web: LocalProvider) -> None:
    server = await web.create_server(server_request("plain", "az1-host1", image=web_image()))
    assert "agent_pid" not in server.details and "agents_log" not in server.details
    assert not (Path(server.details["workdir"]) / "agents").exists()


async def test_missing_agents_refuse_the_server_before_making_it(
    local_home: Path, port: int, tmp_path: Path, stub: AgentStub
) -> None:
    nowhere = AgentInstall(bin=tmp_path / "no-bin", share=tmp_path / "no-share")
    provider = LocalProvider(
        local_home, with_images(web_image()), LocalOptions(port=port, agent_install=nowhere)
    )
    request = web_request(stub)
    with pytest.raises(PermanentError, match="make venv"):
        await provider.create_server(request)
    assert await provider.list_resources() == []


async def test_many_deployments_on_one_server_run_in_order(
    web: LocalProvider, stub: AgentStub
) -> None:
    steps = [
        replace(
            hello(f"step{i}"),
            deployment=f"step{i}",
            config=replace(
                HELLO,
                name=f"step{i}",
                config=f'#!/bin/sh\necho {i} >> "$SHOAL_NODE_WORKDIR/order.txt"\n',
            ),
        )
        for i in range(3)
    ]
    stub.deployments = steps
    request = web_request(stub)
    server = await web.create_server(request)
    await asyncio.gather(*(stub.wait_signal(s) for s in steps))
    assert server.address is not None
    assert await http_get(server.address, "/order.txt") == (200, b"0\n1\n2\n")


PLAYBOOK = """\
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  tasks:
    - name: write what the deployment was given
      copy:
        content: "{{ who }} via ansible"
        dest: "{{ lookup('env', 'SHOAL_NODE_WORKDIR') }}/who.txt"
    - name: an output for Shoal
      copy:
        content: "played for {{ who }}"
        dest: "{{ heat_outputs_path }}.greeting"
"""


async def test_the_ansible_hook_runs_a_playbook(web: LocalProvider, stub: AgentStub) -> None:
    play = replace(
        hello("ansible"),
        deployment="play",
        config=replace(HELLO, name="play", group=HookGroup.ANSIBLE, config=PLAYBOOK),
    )
    stub.deployments = [play]
    server = await web.create_server(web_request(stub))
    signal = await stub.wait_signal(play)
    assert signal.status_code == 0, signal.stderr or signal.stdout
    assert dict(signal.outputs) == {"greeting": "played for ansible"}
    assert "PLAY RECAP" in signal.stdout
    assert server.address is not None
    assert await http_get(server.address, "/who.txt") == (200, b"ansible via ansible")


def test_os_collect_config_reads_the_written_configuration_back(
    installed: AgentInstall, tmp_path: Path
) -> None:
    """What `prepare` writes, as os-collect-config's own option parsing reads it (oslo.config
    would substitute a `$` in the URL if it were not escaped)."""
    layout = AgentLayout(tmp_path / "agents")
    url = "http://127.0.0.1:1/v1/metadata/n?secret=a$b"
    argv = prepare(layout, installed, metadata_url=url, polling_interval_s=2.5)
    assert argv == [
        str(installed.bin / "os-collect-config"),
        "--config-file",
        str(layout.config_file),
    ]
    read_back = (
        "from oslo_config import cfg\n"
        "from os_collect_config import collect\n"
        "collect.setup_conf()\n"
        f"cfg.CONF(args=['--config-file', {str(layout.config_file)!r}])\n"
        "c = cfg.CONF\n"
        "print(c.request.metadata_url, c.collectors, c.polling_interval, c.cachedir, c.command)\n"
    )
    done = subprocess.run(
        [str(installed.bin / "python"), "-c", read_back],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split(" ", 4) == [
        url,
        "['request']",
        "2.5",
        str(layout.root / "var/lib/os-collect-config"),
        f"os-refresh-config --lockfile {layout.lockfile}\n",
    ]

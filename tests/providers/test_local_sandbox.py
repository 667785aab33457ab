"""Local nodes run sandboxed (issue 29): a deployment script, run by Heat's real agents under
bubblewrap, tries to read what Shoal keeps and what another node wrote, and fails; a node that
swaps its log or www/ for a symlink gets nothing through it.

Real processes, real bwrap (Debian `bubblewrap`); these tests fail, not skip, without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
from dataclasses import replace
from pathlib import Path

import pytest

from shoal.files import remove_tree_beneath, write_beneath
from shoal.model.software import (
    ConfigInput,
    DeployAction,
    HookGroup,
    ResolvedDeployment,
    SoftwareConfig,
)
from shoal.providers.local import LocalProvider
from shoal.providers.local.agents import AgentInstall, AgentLayout, prepare
from shoal.providers.local.launcher import LOG_NAME
from shoal.providers.local.options import LocalOptions
from shoal.providers.local.sandbox import Sandbox, SandboxUnavailableError

from .agent_stub import agent_stub
from .support import http_get, server_request, web_image, with_images

SECRET = "admin-token-value-7d1c"
PEER_SECRET = "peer-secret-value-91ab"

PROBE = SoftwareConfig(
    name="probe",
    group=HookGroup.SCRIPT,
    config="""#!/bin/sh
up="$SHOAL_NODE_WORKDIR/../../../admin-token"
for f in "$token" "$peer_file" "/proc/$server_pid/environ" "$up"; do
  if cat "$f" 2>/dev/null; then echo "READ $f"; else echo "DENIED $f"; fi
done
if ls "$peer_dir" 2>/dev/null; then echo "LISTED peer"; else echo "DENIED peer dir"; fi
echo pwned > "$home/pwned" 2>/dev/null  # at most into its own /tmp: checked from outside
echo "database ${SHOAL_DATABASE_URL:-unset} cloud ${OS_PASSWORD:-unset}"
echo "uid $(id -u)"
echo mine > "$SHOAL_NODE_WORKDIR/mine.txt" && echo "WROTE own"
""",
    inputs=tuple(ConfigInput(n) for n in ("token", "peer_file", "peer_dir", "server_pid", "home")),
)


@pytest.fixture(scope="module")
def installed() -> AgentInstall:
    return AgentInstall.find()


async def test_a_script_reads_neither_the_home_nor_another_node(
    local_home: Path, port: int, installed: AgentInstall, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's own settings, which a node's environment must not carry.
    monkeypatch.setenv("SHOAL_DATABASE_URL", "postgresql://shoal:db-password@db/shoal")
    monkeypatch.setenv("OS_PASSWORD", "cloud-password")
    shoal_home = local_home.parent
    shoal_home.mkdir(parents=True, exist_ok=True)
    (shoal_home / "admin-token").write_text(SECRET)
    provider = LocalProvider(
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
    assert provider.confinement.sandboxed
    peer = await provider.create_server(server_request("peer", "az1-host2", image=web_image()))
    peer_dir = Path(peer.details["workdir"])
    (peer_dir / "secret.txt").write_text(PEER_SECRET)
    with agent_stub() as stub:
        run = ResolvedDeployment(
            deployment="probe",
            node="web-0",
            action=DeployAction.CREATE,
            config=PROBE,
            inputs={
                "token": str(shoal_home / "admin-token"),
                "peer_file": str(peer_dir / "secret.txt"),
                "peer_dir": str(peer_dir),
                "server_pid": str(os.getpid()),
                "home": str(shoal_home),
            },
            digest="d1",
        )
        stub.deployments = [run]
        request = replace(
            server_request("web-0", "az1-host1", image=web_image()),
            metadata_url=stub.metadata_url,
        )
        server = await provider.create_server(request)
        signal = await stub.wait_signal(run)
    out = signal.stdout
    assert signal.status_code == 0, signal
    assert SECRET not in out and PEER_SECRET not in out and "password" not in out, out
    assert "READ" not in out and "LISTED" not in out, out
    assert out.count("DENIED") == 5, out
    assert "database unset cloud unset" in out and "uid 65534" in out and "WROTE own" in out, out
    assert not (shoal_home / "pwned").exists()
    # Its own directory is its own: what it wrote is there, and served.
    assert server.address is not None
    assert await http_get(server.address, "/mine.txt") == (200, b"mine\n")


async def test_a_log_or_www_swapped_for_a_link_serves_nothing(
    local: LocalProvider, tmp_path: Path
) -> None:
    secret = tmp_path / "admin-token"
    secret.write_text(SECRET)
    server = await local.create_server(server_request("n", "az1-host1"))
    workdir = Path(server.details["workdir"])
    (workdir / LOG_NAME).unlink()
    (workdir / LOG_NAME).symlink_to(secret)
    assert local.node_logs.node_log(server.id, 4096) is None
    (workdir / "www").symlink_to(tmp_path, target_is_directory=True)
    assert server.address is not None
    with pytest.raises(urllib.error.HTTPError) as e:
        await http_get(server.address, "/www/admin-token")
    assert e.value.code == 404
    # A restart never appends the node's output through the link either.
    await local.reboot(server.id)
    assert secret.read_text() == SECRET and not (workdir / LOG_NAME).is_symlink()


def test_without_bwrap_the_provider_refuses_naming_the_package(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailableError, match="bubblewrap"):
        Sandbox.find(environ={"PATH": str(tmp_path)})
    # The provider, in a process whose PATH has no bwrap (as a machine without the package):
    make = (
        "from shoal.providers.local.provider import LocalProvider as P;"
        "from shoal.providers.local.options import LocalOptions as O;"
        "print('sandboxed', P({!r}, None, O({})).confinement.sandboxed)"
    )
    for options, refused in (("", True), ("sandbox='off'", False)):
        done = subprocess.run(
            [sys.executable, "-c", make.format(str(tmp_path / "local"), options)],
            env={**os.environ, "PATH": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (done.returncode != 0) is refused, done.stderr
        assert ("SandboxUnavailableError" in done.stderr) is refused, done.stderr
        assert ("bubblewrap" in done.stderr) is refused, done.stderr
        assert ("sandboxed False" in done.stdout) is not refused, done.stdout


def test_shoal_never_writes_through_a_link_in_a_nodes_tree(
    tmp_path: Path, installed: AgentInstall
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "admin-token").write_text(SECRET)
    workdir = tmp_path / "node"
    (workdir / "agents").mkdir(parents=True)
    (workdir / "agents" / "etc").symlink_to(home, target_is_directory=True)
    # A link swapped in at the instant of the write: refused, nothing written there.
    with pytest.raises(OSError):
        write_beneath(workdir, "agents/etc/os-collect-config.conf", "x")
    with pytest.raises(OSError):
        remove_tree_beneath(workdir, "agents/etc/admin-token")
    assert sorted(p.name for p in home.iterdir()) == ["admin-token"]
    # Found before writing: the agents' tree starts afresh, inside the node's directory.
    layout = AgentLayout.of(workdir)
    prepare(layout, installed, metadata_url="http://127.0.0.1:1/m", polling_interval_s=1.0)
    assert not (workdir / "agents" / "etc").is_symlink() and layout.config_file.is_file()
    assert sorted(p.name for p in home.iterdir()) == ["admin-token"]
    assert (home / "admin-token").read_text() == SECRET

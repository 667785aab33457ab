"""Helpers for provider tests: requests in few words, a free port, a sweep of stray processes."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, default_inventory
from shoal.model.inventory import Flavor, Image, Inventory
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.providers.base import ServerRequest, VolumeRequest
from shoal.providers.local import isolation, processes
from tests.support.ports import free_port as free_port  # re-exported for provider tests

TINY = CLASSIC_FLAVORS[0]


def with_images(*images: Image) -> Inventory:
    """The default inventory with more images in its catalog."""
    base = default_inventory()
    return Inventory(hosts=base.hosts, flavors=base.flavors, images=(*base.images, *images))


def web_image() -> Image:
    """An image whose `command` is Python's http.server, serving the server's workdir."""
    python = shlex.quote(sys.executable)
    return Image(
        "img-web",
        "web",
        properties={
            "command": f"{python} -m http.server --bind {{address}} {{port}}",
            "health_path": "/",
        },
    )


def profile(image: Image = CIRROS, flavor: Flavor = TINY) -> ServerProfile:
    return ServerProfile(flavor, image)


def zone_of(host: str) -> str:
    return host.split("-")[0] if host.startswith("az") else "az1"


def server_request(
    key: str, host: str, *, name: str | None = None, cluster: str = "c1", image: Image = CIRROS
) -> ServerRequest:
    return ServerRequest(
        key=key,
        name=name or key,
        cluster=cluster,
        host=host,
        zone=zone_of(host),
        profile=ServerProfile(TINY, image),
    )


def volume_request(key: str, host: str, *, size_gb: int = 1, cluster: str = "c1") -> VolumeRequest:
    return VolumeRequest(
        key=key,
        name=key,
        cluster=cluster,
        host=host,
        zone=zone_of(host),
        profile=VolumeProfile(size_gb),
    )


async def http_get(address: str, path: str = "/") -> tuple[int, bytes]:
    """GET http://address/path from a thread (urllib), so the event loop keeps running."""

    def fetch() -> tuple[int, bytes]:
        with urllib.request.urlopen(f"http://{address}{path}", timeout=5) as r:
            return r.status, r.read()

    return await asyncio.to_thread(fetch)


async def get_json(address: str) -> Any:
    status, body = await http_get(address)
    assert status == 200
    return json.loads(body)


def pid_alive(pid: int) -> bool:
    """True while /proc has the pid and it is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def processes_with_key(key: str) -> list[int]:
    """The process groups (each a node's session leader's pid) of every live process whose
    command line carries `key` as an argument: a sandboxed node is bwrap and what runs in it."""
    out: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
                group = os.getpgid(int(entry.name))
            except OSError:
                continue
            if key.encode() in args and pid_alive(int(entry.name)):
                out.add(group)
    return sorted(out)


def sweep(home: Path) -> None:
    """SIGKILL every recorded node (and agent chain) process under `home` still running, and
    remove the networks of its nodes (issue 39)."""
    for path in (home / "resources").glob("*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        key = data.get("key", "")
        for pid in (data.get("pid"), data.get("agent_pid")):
            if isinstance(pid, int) and processes.is_running(pid, key):
                processes.signal_group(pid, signal.SIGKILL)
    isolation.remove_home(home)

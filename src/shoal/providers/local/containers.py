"""A local server's container runtime: `podman system service` on a socket in its workdir.

The node's agents (and so heat-agents' docker-compose hook, and Shoal's kubelet stand-in) reach
it through `DOCKER_HOST=unix://<workdir>/podman/podman.sock`, a path inside the node's own
working directory, so it is visible from a sandbox that shows the node only its workdir. The
service runs under the same watcher as the agents (agentwatch.py): when the server's process
dies, the API goes with it. Containers are run by conmon, outside that process tree, so the
provider stops them itself when the server stops (a guest shutting down), starts the ones with
restart policy `always` again when it starts (podman-restart.service's job on a host), and
removes them with the server.

Security: the socket is root-equivalent on this host (whoever reaches it can run a privileged
container with the host's root mounted). docs/containers.md says so; the service refuses
container deployments of non-admin projects unless the operator says otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from shoal.providers.local.podman import Podman, Store

SOCKET_NAME = "podman.sock"
PID_NAME = "service.pid"
LOG_NAME = "service.log"
DOCKER_HOST_ENV = "DOCKER_HOST"
_MAX_SOCKET_PATH = 100
"""sun_path holds 108 bytes; deeper workdirs bind elsewhere and link the socket in."""


def socket_path(store: Store) -> Path:
    return store.root / SOCKET_NAME


def bind_path(store: Store, key: str) -> Path:
    """Where the service binds and clients connect: the socket path in the workdir, or for a
    workdir too deep for a socket's path (sun_path: 108 bytes, for connect() too) a short path
    under the temporary directory, which the workdir's `podman.sock` links to for people."""
    wanted = socket_path(store)
    if len(str(wanted)) <= _MAX_SOCKET_PATH:
        return wanted
    short = Path(tempfile.gettempdir()) / "shoal-podman"
    short.mkdir(mode=0o700, exist_ok=True)
    # A directory per server, so a sandboxed node's agents can be shown just their own
    # (a bind of the socket file itself would go stale when the service binds it anew).
    own = short / f"sock-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    own.mkdir(mode=0o700, exist_ok=True)
    return own / SOCKET_NAME


def service_argv(podman: Podman, store: Store, bound: Path) -> list[str]:
    # --time 0: never exit for being idle (a deployment may come hours later).
    return store.argv(podman, "system", "service", "--time", "0", f"unix://{bound}")


def prepare(store: Store, bound: Path) -> None:
    """Clear a stale socket (and link) before the service binds again."""
    link = socket_path(store)
    for path in {link, bound}:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if bound != link:
        link.symlink_to(bound)


def ping(path: Path, timeout_s: float = 2.0) -> bool:
    """Whether the API answers `GET /_ping` on the socket."""
    conn = _UnixHTTPConnection(str(path), timeout_s)
    try:
        conn.request("GET", "/_ping")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


async def wait_ready(path: Path, alive: Callable[[], bool], *, timeout_s: float) -> None:
    """Poll the socket until the API answers. Raises TimeoutError, or RuntimeError when the
    service exited first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not await asyncio.to_thread(ping, path):
        if not alive():
            raise RuntimeError("podman system service exited")
        if loop.time() >= deadline:
            raise TimeoutError(f"podman system service did not answer on {path}")
        await asyncio.sleep(0.05)


def run(podman: Podman, store: Store, *args: str, timeout_s: float = 60.0) -> str:
    """Run one podman command on the store; its combined output (blocking: use a thread)."""
    try:
        done = subprocess.run(
            store.argv(podman, *args),
            env=store.environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
            # Out of the server's process group: a signal that stops Shoal must not cut a
            # podman call short and leave a half-made container (nodes outlive Shoal).
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return (done.stdout + done.stderr).decode(errors="replace")


def stop_all(podman: Podman, store: Store) -> None:
    """Stop every container of the store (kept, so a start brings back the `always` ones)."""
    if store.storage_conf.exists():
        run(podman, store, "stop", "--all", "--time", "1")


def remove_all(podman: Podman, store: Store) -> None:
    """Remove every pod and container of the store and unmount its storage."""
    if not store.storage_conf.exists():
        return
    run(podman, store, "pod", "rm", "--all", "--force", "--time", "0")
    run(podman, store, "rm", "--all", "--force", "--time", "0")
    unmount_under(store.root)
    shutil.rmtree(store.runroot, ignore_errors=True)


_ID = re.compile(r"[0-9a-f]{12,64}")


def compose_project(deployment: str) -> str:
    """The project docker-compose (1.x) names a deployment's directory by, as heat-agents' hook
    runs it: lower case, only letters, digits, `-` and `_` (`ApiDeployment` -> `apideployment`)."""
    return re.sub(r"[^-_a-z0-9]", "", deployment.lower())


def pod_names(manifest: str) -> list[str]:
    """The Pods a kubelet deployment's manifest plays (its documents' `metadata.name`)."""
    try:
        docs = list(yaml.safe_load_all(manifest))
    except yaml.YAMLError:
        return []
    names = []
    for d in docs:
        meta = d.get("metadata") if isinstance(d, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(name, str) and name:
            names.append(name)
    return names


def remove_deployment(podman: Podman, store: Store, deployment: str, pods: list[str]) -> None:
    """Remove what one deployment ran on the node (issue 36: it is no longer declared there):
    its compose project's containers and its Pods; nothing left is no error."""
    if not store.storage_conf.exists():
        return
    label = f"label=com.docker.compose.project={compose_project(deployment)}"
    found = run(podman, store, "ps", "--all", "--quiet", "--filter", label).split()
    ids = [i for i in found if _ID.fullmatch(i)]
    if ids:
        run(podman, store, "rm", "--force", "--time", "0", *ids)
    for pod in pods:
        run(podman, store, "pod", "rm", "--force", "--time", "0", pod)


def start_always(podman: Podman, store: Store) -> None:
    """Start the containers whose restart policy is `always`, as a host's boot would."""
    run(podman, store, "start", "--all", "--filter", "restart-policy=always")


@dataclass
class _Seen:
    offset: int = 0
    restarts: int = 0
    last: str = ""


_RESTARTS: dict[Path, _Seen] = {}
EVENTS_NAME = "events.log"


def restarts(store: Store) -> tuple[int, str]:
    """How many times the store's containers were restarted by their restart policy (a
    container that died behind Shoal's back, then started again by conmon), and the last one's
    name: read from podman's event log, only what was added since the last call."""
    path = store.root / EVENTS_NAME
    seen = _RESTARTS.setdefault(path, _Seen())
    try:
        size = path.stat().st_size
        if size < seen.offset:  # rotated or recreated
            seen.offset, seen.restarts = 0, 0
        with open(path, "rb") as f:
            f.seek(seen.offset)
            added = f.read(max(0, size - seen.offset))
    except OSError:
        return seen.restarts, seen.last
    complete = added.rfind(b"\n") + 1
    seen.offset += complete
    for line in added[:complete].splitlines():
        if b'"restart"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("Status") == "restart" and event.get("Type") == "container":
            seen.restarts += 1
            seen.last = str(event.get("Name", ""))
    return seen.restarts, seen.last


def unmount_under(root: Path) -> None:
    """Lazily unmount what podman left mounted beneath `root` (its overlay home), deepest
    first, so the directory can be deleted."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return
    prefix = str(root.resolve()) + os.sep
    points = [m.split()[1] for m in mounts if len(m.split()) > 1]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        with contextlib.suppress(OSError):
            subprocess.run(["umount", "-l", point], capture_output=True, check=False, timeout=10)


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout_s: float) -> None:
        super().__init__("localhost", timeout=timeout_s)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


UnixHTTPConnection = _UnixHTTPConnection
"""An HTTP connection over a node's podman socket (crashloops.py starts containers through it)."""

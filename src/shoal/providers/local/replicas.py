"""Workloads' replicas as real containers on local servers (issue 22): the `ReplicaRuntime` of
the `local` provider.

A replica is one podman container per container of its template, run with the podman CLI in
the container store of the server it was placed on (`<workdir>/podman`, podman.py), so it
shares what a server's containers already get: the images imported once per home, the node's
network (its own namespace, `--network ns:/run/netns/...`, or the host's when it shares it: it
binds the server's loopback address 127.Z.H.N, given to it as `SHOAL_NODE_ADDRESS`), and the
server's lifecycle — the server stops, its containers stop
(`containers.stop_all`); it is deleted or its host fails, they are removed or stopped with it.
No `podman system service` is needed for replicas: they are driven by the engine's keeper, not
by agents on the node.

Every container carries the label `shoal.replica=<key>`, and is named from the key, so a start
twice never runs two (the old ones are removed first). The keeper's restart policy and back-off
decide restarts, so podman's own restart policy is `no`: a container that exits reads EXITED.
States are read with one `podman ps -a` per server holding replicas per tick (run side by
side), not one call per replica; an exit is told as it happens (`exited`, from the servers'
podman event logs: exitwatch.py), so the keeper need not wait for its next tick to see it.
Probes (http GET, tcp connect, exec) run here because only the runtime knows the server's
address and how to enter a container.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shoal.model.workload_rollouts import ContainerRun
from shoal.model.workloads import Probe, ProbeKind
from shoal.providers import netprobe
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.local import podman
from shoal.providers.local.exitwatch import ExitWatch
from shoal.providers.local.records import ServerRecord
from shoal.providers.replicas import ReplicaState, ReplicaTemplate

log = logging.getLogger("shoal.local.replicas")

LABEL = "shoal.replica"
MARKER = "replicas"
"""A file in a server's podman directory: this server's store has held replicas (so state
reads skip servers that never ran one)."""
_NAME_OK = re.compile(r"[^a-zA-Z0-9_.-]")
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_RUN_TIMEOUT_S = 120.0


def container_name(key: str, container: str) -> str:
    """A podman name for one container of a replica: readable, and unique per key (a digest of
    the key, since a key's characters may not all be allowed in a name)."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    tail = _NAME_OK.sub("_", key.rsplit("/", 1)[-1])[:40]
    return f"shoal-{tail}-{digest}-{_NAME_OK.sub('_', container)[:20]}"


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion of command and args from the container's env (an unknown
    variable is left as written, as Kubernetes does)."""
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), text)


class Servers(Protocol):
    """What the replicas need of the local provider's servers (directory.py implements it)."""

    def podman_runtime(self) -> podman.Podman | None:
        """podman, when containers are wanted and installed."""

    def server_records(self) -> list[ServerRecord]: ...

    def server_record(self, server_id: str) -> ServerRecord | None: ...

    def server_live(self, record: ServerRecord) -> bool:
        """Running, not being rebuilt or rebooted, its host not failed, its workdir there."""

    def node_store(self, record: ServerRecord) -> podman.Store: ...

    def server_lock(self, record: ServerRecord) -> asyncio.Lock:
        """The lock the server's create and delete hold."""

    def image_store(self) -> podman.Store: ...

    def network_mode(self, record: ServerRecord) -> str:
        """podman's `--network` for the server's containers: its own namespace's, or
        "host" when it shares the host's network."""


@dataclass(frozen=True, slots=True)
class _Server:
    record: ServerRecord
    store: podman.Store


class LocalReplicas:
    """Replicas of workloads as podman containers in their servers' stores."""

    def __init__(self, servers: Servers) -> None:
        self._directory = servers
        self._where: dict[str, str] = {}
        """Replica key -> the server id it was started on (rebuilt from labels by reads)."""
        self._exits = ExitWatch(self._stores_holding_replicas, LABEL)
        self._images: set[str] = set()
        """Images known to be in the home's store (a start of one need not ask podman)."""
        self._started: dict[str, tuple[str, tuple[str, ...]]] = {}
        """Replica key -> the server and container names this runtime last started for it."""

    async def exited(self) -> None:
        """`WatchesExits`: once a replica's container died (its server's podman event log)."""
        await self._exits.exited()

    def _stores_holding_replicas(self) -> list[Path]:
        return [s.store.root for s in self._servers() if (s.store.root / MARKER).exists()]

    # -- ReplicaRuntime --------------------------------------------------------------------

    async def start_replica(self, key: str, server_id: str, template: ReplicaTemplate) -> None:
        found = self._podman()
        server = self._live(server_id)
        if server is None:
            raise ResourceGone(f"server {server_id} is not running")
        await asyncio.to_thread(self._prepare, found, server.store)
        for c in template.containers:
            if c.image in self._images:
                continue  # (a restart need not ask again: one podman process fewer per start)
            exists = await asyncio.to_thread(
                _run, found, server.store, "image", "exists", c.image, timeout_s=30
            )
            if exists.returncode == 1:
                raise PermanentError(
                    f"image {c.image} is not in this home (no registry: `shoal image import`)"
                )
            if exists.returncode == 0:
                self._images.add(c.image)
        previous = self._where.get(key)
        if previous is not None and previous != server_id:
            await self.stop_replica(key)
        # Under the server's lock, as its delete is: a container started while the server's
        # store is being removed would outlive it.
        async with self._directory.server_lock(server.record):
            if self._live(server_id) is None:
                raise ResourceGone(f"server {server_id} is not running")
            await self._run_containers(found, server, key, template)

    async def _run_containers(
        self, found: podman.Podman, server: _Server, key: str, template: ReplicaTemplate
    ) -> None:
        names = (server.record.id, tuple(container_name(key, c.name) for c in template.containers))
        if self._started.pop(key, None) != names:
            # Whatever ran under the key, by any name (another template's containers): removed.
            # A restart of the same containers on the same server needs no call for it: each
            # `run --replace` replaces its own exited container.
            await asyncio.to_thread(_remove, found, server.store, key)
        self._where[key] = server.record.id
        for c in template.containers:
            argv, hidden = run_argv(
                server.record,
                key,
                template.revision,
                c,
                self._directory.network_mode(server.record),
            )
            done = await asyncio.to_thread(_run, found, server.store, *argv, extra_env=hidden)
            if done.returncode != 0:
                self._images.discard(c.image)  # (asked again next time: it may have gone)
                await asyncio.to_thread(_remove, found, server.store, key)
                # podman's own failures (125) on an image that exists are not the template's
                # fault (a loaded machine, a busy store): another try may work.
                raise TemporaryError(
                    f"podman run of {c.name} for {key} failed: {_tail(done.stdout + done.stderr)}"
                )
        self._started[key] = names

    async def replica_states(self, keys: list[str]) -> dict[str, ReplicaState]:
        found = self._directory.podman_runtime()
        states: dict[str, ReplicaState] = dict.fromkeys(keys, ReplicaState.LOST)
        if found is None or not keys:
            return states
        servers = [s for s in self._servers() if (s.store.root / MARKER).exists()]
        live = [s for s in servers if self._is_live(s.record)]
        listed = await asyncio.gather(*(asyncio.to_thread(_list, found, s.store) for s in live))
        per_key: dict[str, list[str]] = {}
        for server, rows in zip(live, listed, strict=True):
            for key, state in rows:
                self._where[key] = server.record.id
                per_key.setdefault(key, []).append(state)
        for key in keys:
            seen = per_key.get(key)
            if not seen:
                continue
            if all(s == "running" for s in seen):
                states[key] = ReplicaState.RUNNING
            elif any(s in ("exited", "stopped", "dead") for s in seen):
                states[key] = ReplicaState.EXITED
            else:  # created, paused, starting: not running, not ended either
                states[key] = ReplicaState.EXITED
        return states

    async def stop_replica(self, key: str) -> None:
        found = self._directory.podman_runtime()
        if found is None:
            return
        where = self._where.pop(key, None)
        self._started.pop(key, None)
        servers = self._servers()
        if where is not None:
            servers = [s for s in servers if s.record.id == where] or servers
        for s in servers:
            if (s.store.root / MARKER).exists() and s.store.storage_conf.exists():
                await asyncio.to_thread(_remove, found, s.store, key)

    # -- probes (providers/replicas.py `ReplicaProber`) --------------------------------------

    async def probe(self, key: str, server_id: str, container: str, probe: Probe) -> bool:
        server = self._live(server_id)
        if server is None:
            return False
        address = server.record.address
        timeout = max(0.1, probe.timeout_s)
        if probe.kind is ProbeKind.HTTP:
            assert probe.port is not None
            return await asyncio.to_thread(
                netprobe.http_ok, address, probe.port, probe.path, timeout
            )
        if probe.kind is ProbeKind.TCP:
            assert probe.port is not None
            return await asyncio.to_thread(netprobe.tcp_ok, address, probe.port, timeout)
        found = self._directory.podman_runtime()
        if found is None:
            return False
        name = container_name(key, container)
        done = await asyncio.to_thread(
            _run, found, server.store, "exec", name, *probe.command, timeout_s=timeout + 5
        )
        return done.returncode == 0

    # -- test hook ---------------------------------------------------------------------------

    async def container_pids(self, key: str) -> list[int]:
        """The host pids of the replica's containers' main processes (for `kill -9`)."""
        found = self._podman()
        where = self._where.get(key)
        pids: list[int] = []
        for s in self._servers():
            if where is not None and s.record.id != where:
                continue
            if not (s.store.root / MARKER).exists():
                continue
            done = await asyncio.to_thread(
                _run,
                found,
                s.store,
                "ps",
                "--filter",
                f"label={LABEL}={key}",
                "--format",
                "{{.Pid}}",
            )
            pids += [int(x) for x in done.stdout.split() if x.isdigit() and int(x) > 0]
        return pids

    # -- helpers -----------------------------------------------------------------------------

    def _podman(self) -> podman.Podman:
        found = self._directory.podman_runtime()
        if found is None:
            raise PermanentError(
                f"replicas on local need podman and runc: apt-get install -y {podman.PACKAGES}"
            )
        return found

    def _servers(self) -> list[_Server]:
        return [_Server(r, self._directory.node_store(r)) for r in self._directory.server_records()]

    def _is_live(self, r: ServerRecord) -> bool:
        return self._directory.server_live(r)

    def _live(self, server_id: str) -> _Server | None:
        r = self._directory.server_record(server_id)
        if r is None or not self._is_live(r):
            return None
        return _Server(r, self._directory.node_store(r))

    def _prepare(self, found: podman.Podman, store: podman.Store) -> None:
        if not store.storage_conf.exists():
            self._directory.image_store().write(found)
            store.write(found)
        (store.root / MARKER).touch()


def run_argv(
    r: ServerRecord, key: str, revision: str, c: ContainerRun, network: str = "host"
) -> tuple[list[str], dict[str, str]]:
    """`podman run`'s arguments for container `c` of replica `key` on server `r`, and the
    environment podman itself is given: the secrets, named on the line and valued only there."""
    env = {
        "SHOAL_NODE_ADDRESS": r.address,
        "SHOAL_NODE_NAME": r.name,
        "SHOAL_REPLICA": key.rsplit("/", 1)[-1],
        **dict(c.env),
    }
    argv = [
        "run",
        "--detach",
        "--name",
        container_name(key, c.name),
        "--network",
        network,
        "--replace",
        "--restart",
        "no",
        "--label",
        f"{LABEL}={key}",
        "--label",
        f"shoal.server={r.id}",
        "--label",
        f"shoal.revision={revision}",
    ]
    for k, v in env.items():
        argv += ["--env", f"{k}={v}"]
    # A secret goes by name only (`--env NAME`: podman takes its value from its own
    # environment), so it is never on a command line a `ps` or a log could show.
    hidden = dict(c.secret_env)
    for k in hidden:
        argv += ["--env", k]
    if c.cpu_milli:
        argv += ["--cpus", f"{c.cpu_milli / 1000:.3f}"]
    if c.memory_mb:
        argv += ["--memory", f"{c.memory_mb}m"]
    if c.command:
        argv += ["--entrypoint", json.dumps([expand(x, env) for x in c.command])]
    argv += [c.image, *(expand(x, env) for x in c.args)]
    return argv, hidden


def _run(
    found: podman.Podman,
    store: podman.Store,
    *args: str,
    timeout_s: float = _RUN_TIMEOUT_S,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            store.argv(found, *args),
            env={**store.environment(), **(extra_env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            # Out of the server's process group: a signal that stops Shoal must not cut a
            # podman call short and leave a half-made container (nodes outlive Shoal).
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(list(args), 125, str(e), "")


def _list(found: podman.Podman, store: podman.Store) -> list[tuple[str, str]]:
    """(replica key, state) of every replica container in the store: one podman call."""
    done = _run(found, store, "ps", "--all", "--filter", f"label={LABEL}", "--format", "json")
    if done.returncode != 0:
        raise TemporaryError(f"podman ps failed: {_tail(done.stdout + done.stderr)}")
    try:
        rows = json.loads(done.stdout or "[]")
    except ValueError as e:
        raise TemporaryError("podman ps gave no JSON") from e
    found_rows: list[tuple[str, str]] = []
    for row in rows if isinstance(rows, list) else []:
        labels = row.get("Labels") or {}
        key = labels.get(LABEL)
        if key:
            found_rows.append((str(key), str(row.get("State", "")).lower()))
    return found_rows


def _remove(found: podman.Podman, store: podman.Store, key: str) -> None:
    _run(found, store, "rm", "--force", "--time", "0", "--filter", f"label={LABEL}={key}")


def _tail(text: str, limit: int = 400) -> str:
    return text.strip()[-limit:]


__all__ = ["LABEL", "LocalReplicas", "container_name", "expand"]

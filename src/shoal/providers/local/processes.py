"""Node processes: start them detached, tell whether one is still ours, stop its whole group.

A node runs in its own session (`start_new_session=True`), so it outlives Shoal and its process
group can be signalled as one. A child this process started is known by its un-reaped pid. A
pid recorded before a restart counts as a live node only if the process exists, is not a
zombie, and carries the node's key in its command line (the built-in node server) or in its
environment (any command), so a pid recycled by an unrelated process is never taken for the
node.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from shoal.files import open_private_append, read_tail_beneath

KEY_ENV = "SHOAL_NODE_KEY"
ID_ENV = "SHOAL_NODE_ID"

_SPAWNED: dict[int, subprocess.Popen[bytes]] = {}
"""Children this process started, kept so they can be reaped (no zombies, no warnings)."""


class ExitedEarlyError(Exception):
    """The process ended before it answered."""


def spawn(
    argv: Sequence[str], *, cwd: Path, log: Path, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    """Start `argv` detached in its own session, output appended to `log`. Blocking: run it
    in a thread. Raises OSError when the program cannot be started."""
    if log.is_symlink():
        log.unlink()  # a node put a link there: its output never goes through it
    with os.fdopen(open_private_append(log), "ab") as out:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            umask=0o077,  # what a node and its agents create is theirs only (0600/0700)
        )
    _SPAWNED[proc.pid] = proc
    return proc


def is_running(pid: int | None, key: str) -> bool:
    """Whether `pid` is alive, not a zombie, and is the node with this key."""
    if pid is None or pid <= 0:
        return False
    child = _SPAWNED.get(pid)
    if child is not None:
        # Our own child: its pid cannot be recycled until we reap it, so no /proc check (which
        # also reads an empty cmdline for a moment while the child is still in exec).
        if child.poll() is None:
            return True
        del _SPAWNED[pid]
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
        return False
    return _carries_key(pid, key)


def _carries_key(pid: int, key: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if key.encode() in cmdline:
        return True
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"{KEY_ENV}={key}".encode() in environ


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal the node's process group (its pid leads its own session); ignore if gone."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def terminate(pid: int | None, key: str, *, grace_s: float = 3.0) -> None:
    """SIGTERM the node's group, then SIGKILL after `grace_s`; returns once every process of
    it is gone (a sandboxed node's launcher may end before the node has let go of its port).

    A group whose leader died alone (a node's launcher killed by itself: its sandbox is not tied
    to it, so that it outlives Shoal, issue 39) is ended all the same, when a process of it
    carries the node's key (a group id recycled since is some other program's)."""
    if pid is None or not (is_running(pid, key) or _group_carries(pid, key)):
        return
    signal_group(pid, signal.SIGTERM)
    if await _wait_gone(pid, key, grace_s):
        return
    signal_group(pid, signal.SIGKILL)
    await _wait_gone(pid, key, 10.0)


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. Zombies do not count: the machine's init
    may take seconds to reap a sandbox's launcher once it is orphaned."""
    return next(_members(pgid), None) is not None


def _group_carries(pgid: int, key: str) -> bool:
    """Whether a live process of group `pgid` is the node with this key."""
    return any(_carries_key(pid, key) for pid in _members(pgid))


def _members(pgid: int) -> Iterator[int]:
    """The live processes (not zombies) of a process group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            yield int(entry.name)


async def _wait_gone(pid: int, key: str, timeout_s: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while is_running(pid, key) or _group_alive(pid):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def http_status(address: str, port: int, path: str, timeout_s: float = 1.0) -> int | None:
    """The status code of `GET path`, or None if nothing answered."""
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(address, port)
            try:
                request = f"GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
                writer.write(request.encode())
                await writer.drain()
                line = await reader.readline()
            finally:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
    except (OSError, TimeoutError):
        return None
    parts = line.split()
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
        return int(parts[1])
    return None


async def wait_ready(
    pid: int, key: str, address: str, port: int, path: str, *, timeout_s: float
) -> None:
    """Poll `GET path` until it answers below 500. Raises ExitedEarlyError or TimeoutError."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    delay = 0.02
    while True:
        if not is_running(pid, key):
            raise ExitedEarlyError(f"process {pid} exited")
        status = await http_status(address, port, path)
        if status is not None and status < 500:
            return
        if loop.time() >= deadline:
            raise TimeoutError(f"no answer on {address}:{port}{path} after {timeout_s}s")
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, 0.2)


def log_tail(log: Path, max_bytes: int = 2000) -> str:
    """The end of a node's log, for error messages and `shoal logs`: "" when it is missing, not
    a regular file, or a symlink (a node can replace its log with one; never followed)."""
    data = read_tail_beneath(log.parent, log.name, max_bytes)
    return "" if data is None else data.decode(errors="replace")

"""The managed embedded default: one background `shoal server` per SHOAL_HOME, started on demand.

Without `--url`, a command still needs a Shoal that runs the engine and the manager, or nothing
keeps the cluster as declared (health checks, host-loss recovery) and an interrupted command
would leave its action claimed by a process that is gone. So the first command that needs Shoal
starts `shoal server --background` detached (its own session; output in
`$SHOAL_HOME/server.log`). That server listens on a free loopback port and writes
`$SHOAL_HOME/server.json` (pid and URL); later commands find it there, and it outlives the
command that started it until `shoal server stop`. A lock file serialises the start, so two
commands at once start one server. Only the standard library is used here: this is the path
of every client command, which must stay fast.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shoal.cli.errors import EXIT_FAILED, CliError
from shoal.files import open_private_append, private_dir, write_private

STATE_FILE = "server.json"
LOCK_FILE = "server.lock"
LOG_FILE = "server.log"
START_TIMEOUT_S = 120.0
"""Generous: on a loaded machine a server's imports and migrations can take many seconds."""
STOP_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 2.0
LOG_TAIL_LINES = 20


@dataclass(frozen=True, slots=True)
class ServerState:
    """What a running server wrote into its home: who it is and where it listens."""

    pid: int
    url: str
    background: bool

    def as_json(self) -> str:
        return json.dumps({"pid": self.pid, "url": self.url, "background": self.background})


def state_path(home: Path) -> Path:
    return home / STATE_FILE


def log_path(home: Path) -> Path:
    return home / LOG_FILE


def read_state(home: Path) -> ServerState | None:
    """The server recorded in `home`, if the file is there and readable (alive or not)."""
    try:
        data = json.loads(state_path(home).read_text())
        return ServerState(int(data["pid"]), str(data["url"]), bool(data.get("background")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_state(home: Path, state: ServerState) -> None:
    """Record `state` atomically, so a reader never sees half a file."""
    private_dir(home, ours=False)
    write_private(state_path(home), state.as_json() + "\n")  # 0600, atomic


def clear_state(home: Path, pid: int) -> None:
    """Remove the record if it is still `pid`'s (a newer server may have replaced it)."""
    found = read_state(home)
    if found is not None and found.pid == pid:
        with contextlib.suppress(OSError):
            state_path(home).unlink()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def answers(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether something accepts TCP connections at `url`'s host and port."""
    hostport = url.split("://", 1)[-1].split("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def running(home: Path) -> ServerState | None:
    """The live server of `home`: its process exists and its port answers."""
    state = read_state(home)
    if state is None or not pid_alive(state.pid) or not answers(state.url):
        return None
    return state


def ensure(home: Path) -> ServerState:
    """The background Shoal of `home`, started now if none runs."""
    found = running(home)
    if found is not None:
        return found
    private_dir(home, ours=False)
    with _locked(home / LOCK_FILE):
        found = running(home)  # another command may have started it while we waited
        if found is not None:
            return found
        return _start(home)


def _start(home: Path) -> ServerState:
    log = log_path(home)
    with os.fdopen(open_private_append(log), "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "shoal", "server", "--background"],
            cwd=_here(home),  # relative SHOAL_CONFIG / SHOAL_INVENTORY mean what they meant here
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # not ended by the terminal's Ctrl-C or hang-up
            umask=0o077,  # what it creates under the home is private (0600/0700)
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        state = read_state(home)
        if state is not None and state.pid == proc.pid and answers(state.url):
            sys.stderr.write(
                f"started a background Shoal for {home} at {state.url} "
                f"(pid {state.pid}; log {log}; `shoal server stop` ends it)\n"
            )
            return state
        if proc.poll() is not None:
            raise CliError(
                f"the background Shoal for {home} did not start (exit {proc.returncode}):\n"
                + _tail(log),
                EXIT_FAILED,
            )
        time.sleep(0.05)
    raise CliError(
        f"the background Shoal for {home} did not answer within {START_TIMEOUT_S:g}s "
        f"(pid {proc.pid}); see {log}",
        EXIT_FAILED,
    )


def _here(home: Path) -> Path:
    try:
        return Path.cwd()
    except OSError:  # the command runs in a directory that was deleted
        return home


def stop(home: Path, timeout: float = STOP_TIMEOUT_S) -> ServerState | None:
    """End the server recorded in `home` (SIGTERM, then SIGKILL). The one ended, if any."""
    state = read_state(home)
    if state is None or not pid_alive(state.pid):
        if state is not None:
            clear_state(home, state.pid)
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(state.pid) and time.monotonic() < deadline:
        if _reaped(state.pid):
            break
        time.sleep(0.05)
    if pid_alive(state.pid) and not _reaped(state.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.pid, signal.SIGKILL)
    clear_state(home, state.pid)
    return state


def _reaped(pid: int) -> bool:
    """Reap `pid` if it is our own finished child (then it no longer counts as alive)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with os.fdopen(open_private_append(path), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-LOG_TAIL_LINES:])

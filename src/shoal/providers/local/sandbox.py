"""Local nodes that cannot reach the server: every node process and agent chain runs in
bubblewrap.

A local node runs whatever its image and its deployments say, written by a tenant. Run as
Shoal's own user it could read `$SHOAL_HOME` (the admin token, the database) and every other
node's files (issue 29). Under `bwrap` it sees only: the system's read-only directories, a few
files of /etc, Python and Shoal's code read-only, its own working directory read-write, its own
/tmp, /proc (its own pid namespace) and /dev. It runs as an unprivileged uid (65534) in its own
user namespace, so no capability and no root inside. Its network is its own namespace's when
Shoal can make one (netns.py: started in it by `nsenter`), else the host's.

bwrap is found once (`find`). Without it, Shoal refuses to start the local provider, naming the
Debian package, unless the sandbox is turned off on purpose (`SandboxMode.OFF`), in which case
the API serves its admin only (api/auth.py): an unsandboxed node could take the server.
"""

from __future__ import annotations

import enum
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import shoal

INSIDE_UID = 65534
"""`nobody`: the node's uid inside its user namespace (nothing inside maps to root)."""

DEBIAN_PACKAGE = "bubblewrap"

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/nsswitch.conf",
    "/etc/resolv.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
)
"""What programs read from /etc; nothing else of it (no shadow, no ssh keys, no shoal.toml)."""


class SandboxMode(enum.StrEnum):
    BWRAP = "bwrap"
    OFF = "off"


class SandboxUnavailableError(ValueError):
    """bwrap is wanted but cannot be found (a configuration error, refused at start)."""


@dataclass(frozen=True, slots=True)
class Binds:
    """Extra paths a node sees at the same place inside, besides its own working directory."""

    read_only: tuple[Path, ...] = ()
    read_write: tuple[Path, ...] = ()


NO_BINDS = Binds()


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The `bwrap` to run nodes under, and the code every node may read."""

    bwrap: Path
    code: tuple[Path, ...]

    @classmethod
    def find(
        cls, mode: SandboxMode | str = SandboxMode.BWRAP, environ: Mapping[str, str] = os.environ
    ) -> Sandbox | None:
        """The sandbox for `mode`: None when it is OFF; `SandboxUnavailableError` when bwrap
        is wanted and missing from `environ`'s PATH."""
        try:
            chosen = SandboxMode(mode)
        except ValueError:
            raise ValueError(f"local option sandbox must be bwrap or off, not {mode!r}") from None
        if chosen is SandboxMode.OFF:
            return None
        found = shutil.which("bwrap", path=environ.get("PATH", os.defpath))
        if found is None:
            raise SandboxUnavailableError(
                "local nodes run sandboxed under bubblewrap, and `bwrap` is not on PATH: "
                f"install the Debian package `{DEBIAN_PACKAGE}` (apt-get install "
                f'{DEBIAN_PACKAGE}), or set the local provider\'s option sandbox = "off" '
                "(then the API serves its admin only: an unsandboxed node can read Shoal's home)"
            )
        sandbox = cls(Path(found), code_paths())
        failure = _cannot_run(sandbox.bwrap)
        if failure:
            raise SandboxUnavailableError(
                f"local nodes run sandboxed under bubblewrap, and {found} cannot make a sandbox "
                f"here ({failure}): user namespaces may be disabled "
                "(sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces), or set "
                'the local provider\'s option sandbox = "off" (then the API serves its admin only)'
            )
        return sandbox

    def wrap(
        self,
        argv: Sequence[str],
        *,
        workdir: Path,
        binds: Binds | None = None,
        chdir: Path | None = None,
        die_with_parent: bool = True,
    ) -> list[str]:
        """`argv` run inside the sandbox with `workdir` (read-write) and `binds`, started in
        `chdir` (default: `workdir`). `die_with_parent=False` for a node itself, which
        outlives the Shoal that started it (issue 39); its agents die with their watcher."""
        out = [
            str(self.bwrap),
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--uid",
            str(INSIDE_UID),
            "--gid",
            str(INSIDE_UID),
            *(["--die-with-parent"] if die_with_parent else []),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/var/tmp",
            "--dir",
            "/run",
        ]
        for d in _SYSTEM_DIRS:
            p = Path(d)
            if p.is_symlink():
                out += ["--symlink", os.readlink(p), d]
            elif p.is_dir():
                out += ["--ro-bind", d, d]
        for f in _ETC_FILES:
            out += ["--ro-bind-try", f, f]
        binds = binds or NO_BINDS
        for path in (*self.code, *binds.read_only):
            out += ["--ro-bind-try", str(path), str(path)]
        for path in (workdir, *binds.read_write):
            out += ["--bind", str(path), str(path)]
        out += ["--chdir", str(chdir or workdir), "--", *argv]
        return out


@functools.cache
def _cannot_run(bwrap: Path) -> str:
    """Why this bwrap cannot start a sandbox like a node's ("" when it can); asked once."""
    # The system directories a node's sandbox binds, not "/": a recursive bind of "/" also
    # remounts every mount beneath it, and one made at that instant by another program (podman's
    # overlay check under /tmp) fails the remount, so the probe said "cannot" where nodes can.
    probe = [str(bwrap), "--unshare-user", "--unshare-pid", "--uid", str(INSIDE_UID)]
    for d in _SYSTEM_DIRS:
        p = Path(d)
        if p.is_symlink():
            probe += ["--symlink", os.readlink(p), d]
        elif p.is_dir():
            probe += ["--ro-bind", d, d]
    probe += ["--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def code_paths() -> tuple[Path, ...]:
    """Python (its installation and the venv) and Shoal's source: what the node server and the
    agents run, read-only. Resolved, so a symlinked venv is bound where it really is."""
    shoal_root = Path(shoal.__file__).resolve().parent.parent
    wanted = [Path(sys.base_prefix), Path(sys.prefix), shoal_root]
    wanted.append(Path(sys.executable).resolve().parent.parent)
    out: list[Path] = []
    for p in wanted:
        for q in (p, p.resolve()):
            if q not in out and q != Path("/"):
                out.append(q)
    return tuple(out)


def env_for_node(
    env: Mapping[str, str], workdir: Path, server: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a sandboxed node starts with: what Shoal set for it (its identity, the
    agents' paths, PYTHONPATH) and a few neutral variables, nothing else inherited from the
    server's own environment (a database URL, a token, cloud credentials); HOME its own
    directory."""
    inherited = os.environ if server is None else server
    out = {
        k: v
        for k, v in env.items()
        if inherited.get(k) != v or k in _NEUTRAL or k.startswith("LC_")
    }
    out["HOME"] = str(workdir)
    out["TMPDIR"] = "/tmp"
    out.setdefault("PATH", os.defpath)
    return out


_NEUTRAL = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "PYTHONUNBUFFERED"})
"""Kept even when the server has the same value: harmless, and what the node needs."""

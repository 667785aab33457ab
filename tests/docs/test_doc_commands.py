"""Every `shoal` command the README and docs/*.md show runs as written (issue 36).

The shell blocks are read from the documents themselves, so a block added, changed or broken
is tested as it now reads: each block that runs `shoal` (or a script that does) must be listed
in `HOW` below, and each is run whole by bash (`set -e`: every line must succeed), from the
repository's root as a user runs it after `make venv`, in a home of its own (`HOME` in a tmp
directory, no `SHOAL_*` variable of the caller's, `.venv/bin` on the PATH for the docs that say
`shoal`): on `sim` where the block is not about local processes, on `local` where it is.
Everything a block starts (the background Shoal of its home, a `shoal server` it runs) is
stopped and every local process it left is swept afterwards.

A block is run as written except for what `HOW` says of it: a `before` (what the text before
it did, e.g. the cluster an earlier block made), a port (`shoal server --port 8470` would
collide with other runs: a free one stands in for 8470), and a server started in the
foreground (run in the background until it answers). Blocks that cannot run here say why and
which tests cover them instead.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from shoal.cli import background
from tests.support.server import free_port, sweep_local_nodes

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
RUNS_SHOAL = re.compile(
    r"^\s*(?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/shoal|shoal|make demo|examples/\S+\.sh)\b", re.M
)
BLOCK_TIMEOUT_S = 900


@dataclass(frozen=True)
class How:
    provider: str | None
    """`sim` or `local`; None: not run here (see `why`)."""
    why: str = ""
    before: tuple[str, ...] = ()
    """Commands run first, as the text before the block did them."""
    env: tuple[tuple[str, str], ...] = ()
    needs: tuple[str, ...] = ()
    """Programs the block runs (podman...): missing ones fail the test, saying what to install."""
    skip: tuple[str, ...] = ()
    """Lines starting so are not run (each `How` that skips says why)."""


SIM = How("sim")
LOCAL = How("local", needs=("bwrap",))
CONTAINERS = How("local", needs=("bwrap", "podman", "runc", "busybox"))

# Each block by its document and the start of its first line (comment and repeated spaces
# left out). A block not listed fails `test_every_block_is_known`.
HOW: dict[tuple[str, str], How] = {
    ("README.md", "make demo | make check"): How(
        None,
        "`make check` is the whole suite, this test among it; `make demo` runs in the block "
        "below it ('Try it')",
    ),
    ("README.md", "make demo | .venv/bin/shoal get clusters"): LOCAL,
    ("README.md", "examples/seed003/image.sh | .venv/bin/shoal up examples/seed003/templa"): (
        CONTAINERS
    ),
    ("README.md", ".venv/bin/shoal server status | .venv/bin/shoal server stop"): How(
        "sim", before=(".venv/bin/shoal get clusters",)
    ),
    ("README.md", ".venv/bin/shoal plan examples/db-pair.yaml | .venv/bin/shoal plan exam"): SIM,
    ("README.md", ".venv/bin/shoal plan examples/shop-v2.yaml --cluster shop | .venv/bin/"): How(
        "sim",
        before=(".venv/bin/shoal up examples/three-tier.yaml",),
        # The manager would replace the failed host's nodes by itself (the README says so) and
        # could be busy doing it when `recover` asks: by hand here, so the block is not a race.
        env=(("SHOAL_MANAGE", "false"),),
    ),
    ("README.md", ".venv/bin/shoal server stop | .venv/bin/shoal server --port 8470"): SIM,
    ("README.md", "SHOAL_AUTH=keystone SHOAL_KEYSTONE_URL=http://127.0.0.1:5000/v3 \\ | SH"): How(
        None,
        "needs a Keystone and its passwords (written `...`); tests/keystone runs Shoal in "
        "Keystone mode and `shoal keystone register` against a real Keystone",
    ),
    ("README.md", ".venv/bin/shoal --install-completion"): How(
        "sim", env=(("SHELL", "/bin/bash"),)
    ),
    (
        "docs/containers.md",
        "sudo apt-get install -y podman runc busybox-static | examples/seed003/",
    ): How(
        "local",
        needs=CONTAINERS.needs,
        # the packages `needs` checks; installing them is the machine's (.ci/run), not a test's
        skip=("sudo apt-get install",),
    ),
    ("docs/hot.md", "shoal plan examples/seed003/template.yaml -e examples/seed003/ha.yaml"): SIM,
    ("docs/hot.md", "shoal up tests/data/hot/heat-templates/hot/software-config/example-tem"): (
        LOCAL
    ),
    (
        "docs/senlin.md",
        "# 1. Stop Senlin's engine and API (so nothing acts on the clusters), k",
    ): How(
        None,
        "a template for an operator's own Senlin database and Keystone (`PW@db-host`, `...`); "
        "tests/senlin_live/test_import_live.py imports a real Senlin 16's deployment the same "
        "way, and tests/keystone registers the endpoint",
    ),
    (
        "docs/software.md",
        "shoal plan examples/controller/controller.yaml -e examples/controller/",
    ): (SIM),
}
KEY_LENGTH = 70


@dataclass(frozen=True)
class Block:
    document: str
    line: int
    text: str

    @property
    def key(self) -> tuple[str, str]:
        """The document and its first two lines (comments and repeated spaces left out),
        cut at KEY_LENGTH: what a reader recognises the block by."""
        lines = []
        for line in self.text.splitlines()[:2]:
            if not line.lstrip().startswith("#"):
                line = line.split(" #")[0]
            lines.append(" ".join(line.split()))
        return (self.document, " | ".join(lines)[:KEY_LENGTH].rstrip())

    def __str__(self) -> str:
        return f"{self.document}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for path in DOCUMENTS:
        content = path.read_text()
        for m in FENCE.finditer(content):
            if m.group(1) in ("sh", "bash", "shell", "") and RUNS_SHOAL.search(m.group(2)):
                line = content[: m.start()].count("\n") + 2
                found.append(Block(str(path.relative_to(REPO)), line, m.group(2)))
    return found


def test_every_block_is_known() -> None:
    """A new or changed block must be classified (run on sim, on local, or why not)."""
    found = {b.key: b for b in blocks()}
    assert len(found) >= 10, found
    assert [str(b) for k, b in found.items() if k not in HOW] == []
    assert [k for k in HOW if k not in found] == []
    for how in HOW.values():
        assert how.provider in ("sim", "local") or how.why, how


def _script(block: Block, how: How, port: int) -> str:
    """The block as bash runs it: stopping at the first failure; `shoal server` in the
    foreground started in the background until it answers; 8470 a free port."""
    lines = []
    for raw in block.text.replace("8470", str(port)).splitlines():
        if how.skip and raw.lstrip().startswith(how.skip):
            continue
        if re.match(r"^\s*(\.venv/bin/)?shoal server --port \d+", raw):
            command = raw.split("#")[0].strip()
            lines.append(f'{command} > "$HOME/server-fg.log" 2>&1 &')
            lines.append('echo $! > "$HOME/server-fg.pid"')
            lines.append(  # until it answers, as a person waits for its first lines
                "for _ in $(seq 900); do [ -s ~/.local/share/shoal/admin-token ] && "
                f"curl -s -o /dev/null http://127.0.0.1:{port}/ && break; sleep 0.2; done"
            )
        else:
            lines.append(raw)
    # The closing `true` keeps bash from exec'ing the last command in its place, so every
    # command's parent is the shell that runs it, as in a terminal (`--install-completion`
    # finds the user's shell among its parents).
    return "set -euo pipefail\n" + "\n".join(lines) + "\ntrue\n"


def _env(home: Path, how: How) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SHOAL_", "XDG_")) and k not in ("COLUMNS", "VIRTUAL_ENV")
    }
    env.update(HOME=str(home), PATH=f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    if how.provider == "sim":
        env["SHOAL_PROVIDER"] = "sim"
    else:
        env["SHOAL_PROVIDER_OPTIONS"] = f'{{"port": {free_port()}}}'
    env.update(dict(how.env))
    return env


def _end(pid: int) -> None:
    """SIGTERM to the server the block started, then SIGKILL if it outlives its grace."""
    deadline = time.monotonic() + 60
    try:
        os.kill(pid, signal.SIGTERM)
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _stop(home: Path) -> None:
    """Whatever the block started: the default home's background Shoal, a foreground server."""
    data = home / ".local" / "share" / "shoal"
    if data.exists():
        background.stop(data)
    pid_file = home / "server-fg.pid"
    if pid_file.exists():
        _end(int(pid_file.read_text().split()[0]))
    if data.exists():
        sweep_local_nodes(data)


@pytest.mark.parametrize("block", blocks(), ids=str)
def test_the_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    how = HOW.get(block.key)
    assert how is not None, f"{block} is not in HOW"
    if how.provider is None:
        assert how.why
        return  # covered elsewhere (the reason says where); nothing here to run
    missing = [p for p in how.needs if shutil.which(p) is None]
    assert missing == [], f"{block} needs {missing}: apt-get install podman runc busybox-static"
    # A short home, as a user's is: a podman socket path under it must stay within a unix
    # socket's 108 bytes, which pytest's deep tmp_path breaks (tmp_path keeps the logs).
    home = Path(tempfile.mkdtemp(prefix="shoal-doc-", dir="/tmp"))
    port = free_port()
    env = _env(home, how)
    script = "\n".join(how.before) + "\n" + _script(block, how, port)
    try:
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_S,
            check=False,
        )
        server_log = home / "server-fg.log"
        assert done.returncode == 0, (
            f"{block} exited {done.returncode}\n--- script\n{script}\n--- stdout\n"
            f"{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-6000:]}"
            + (f"\n--- server\n{server_log.read_text()[-3000:]}" if server_log.exists() else "")
        )
    finally:
        _stop(home)
        for log in home.glob(".local/share/shoal/server.log"):
            shutil.copy(log, tmp_path / "server.log")
        shutil.rmtree(home, ignore_errors=True)


def test_the_scripts_the_docs_run_are_executable() -> None:
    for block in blocks():
        for m in re.finditer(r"^\s*(examples/\S+\.sh)", block.text, re.M):
            assert os.access(REPO / m.group(1), os.X_OK), (str(block), m.group(1))
    assert sys.executable

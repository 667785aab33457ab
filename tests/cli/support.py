"""The real `shoal` command in subprocesses, on a private SHOAL_HOME, for CLI tests.

`Shoal(home, provider=...)("up", "doc.yaml")` runs `python -m shoal up doc.yaml` with only its
own SHOAL_* variables and returns the finished process (text stdout/stderr). `json(...)` adds
`-o json` and parses stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.interruptible import interruptible
from tests.support.server import SRC

REPO = SRC.parent
EXAMPLES = REPO / "examples"
COMMAND_TIMEOUT_S = 180.0


class Shoal:
    """Runs `shoal` commands against one home (embedded) or one server (`url`)."""

    def __init__(
        self,
        home: Path,
        *,
        provider: str = "sim",
        provider_options: dict[str, Any] | None = None,
        url: str | None = None,
        token: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.home = home
        env = {k: v for k, v in os.environ.items() if not k.startswith("SHOAL_")}
        env.pop("COLUMNS", None)
        env["PYTHONPATH"] = os.pathsep.join(
            dict.fromkeys([str(SRC), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
        )
        env.update(
            SHOAL_HOME=str(home),
            SHOAL_CONFIG=str(home / "shoal.toml"),
            SHOAL_PROVIDER=provider,
            SHOAL_PROVIDER_OPTIONS=json.dumps(provider_options or {}),
            SHOAL_RETRY_BACKOFF_S="0.05",
        )
        if url:
            env["SHOAL_URL"] = url
        if token:
            env["SHOAL_TOKEN"] = token
        env.update(extra or {})
        self.env = env

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "shoal", *args]

    def __call__(
        self, *args: str, stdin: str | None = None, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            env=self.env,
            cwd=REPO,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run and insist on exit 0, showing the command's output otherwise."""
        done = self(*args, stdin=stdin)
        assert done.returncode == 0, explain(done)
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json").stdout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """The command running, to read from and signal: Ctrl-C (SIGINT) reaches it as it
        would from a terminal, whatever this process's own SIGINT is (interruptible.py)."""
        return subprocess.Popen(
            interruptible([sys.executable, "-m", "shoal", *args]),
            env=self.env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def explain(done: subprocess.CompletedProcess[str]) -> str:
    return (
        f"{' '.join(map(str, done.args[2:]))} exited {done.returncode}\n"
        f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    )


def nodes_by_group(cluster: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for n in cluster["nodes"]:
        out.setdefault(n["group"], []).append(n)
    return out

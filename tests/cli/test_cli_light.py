"""The client path stays light: parsing a command line and talking HTTP import no server code.

`shoal --help` and `shoal get clusters` must start fast (benchmarks/cli.py measures them), so
neither may import FastAPI, SQLAlchemy, uvicorn, httpx, openstack, keystoneauth1 or Shoal's
server layers; `--help` not even Rich, asyncio or pydantic (typer's coercion brings pydantic
to a command that parses an option: the floor benchmarks/cli.py measures), and a command
imports no other command's module. This is checked on the modules a real command left
loaded, not on time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from shoal.cli.plan import Objective as CliObjective
from shoal.model.enums import Objective
from tests.cli.support import REPO, Shoal, explain

HEAVY = (
    "fastapi",
    "starlette",
    "sqlalchemy",
    "alembic",
    "uvicorn",
    "httpx",
    "openstack",
    "keystoneauth1",
    "yaml",
    "shoal.api",
    "shoal.runtime",
    "shoal.service",
    "shoal.engine",
    "shoal.store",
    "shoal.providers",
    "shoal.placement",
    "shoal.settings",
)
PROBE = """
import atexit, json, sys
path = sys.argv[1]
def report():
    with open(path, "w") as f:
        json.dump(sorted(sys.modules), f)
atexit.register(report)
sys.argv = ["shoal", *sys.argv[2:]]
from shoal.cli.main import run
run()
"""


def loaded_by(shoal: Shoal, tmp_path: Path, *args: str) -> list[str]:
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args],
        env=shoal.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, explain(done)
    modules: list[str] = json.loads(out.read_text())
    return modules


def heavy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY)]


HELP_HEAVY = ("rich", "asyncio", "ssl", "pydantic", "shoal.cli.client", "shoal.cli.http")
COMMAND_MODULES = ("plan", "clusters", "describe", "project", "receiver", "host", "nodegroup")


def test_help_and_a_listing_import_no_server_code(shoal: Shoal, tmp_path: Path) -> None:
    help_loaded = loaded_by(shoal, tmp_path, "--help")
    assert heavy_in(help_loaded) == []
    assert [m for m in help_loaded if m.split(".")[0] in HELP_HEAVY or m in HELP_HEAVY] == []
    shoal.ok("get", "clusters")  # starts the background Shoal: that one is allowed to be heavy
    listing = loaded_by(shoal, tmp_path, "get", "clusters")
    assert heavy_in(listing) == []
    assert "shoal.cli.get" in listing
    assert [m for m in listing if m.removeprefix("shoal.cli.") in COMMAND_MODULES] == []


def test_the_cli_objectives_are_the_models() -> None:
    assert {o.value for o in CliObjective} == {o.value for o in Objective}

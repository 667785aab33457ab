"""The client path stays light: parsing a command line and talking HTTP import no server code.

`shoal --help` and `shoal get clusters` must start fast (benchmarks/cli.py measures them), so
neither may import FastAPI, SQLAlchemy, uvicorn, httpx, openstack, keystoneauth1 or Shoal's
server layers. This is checked on the modules a real command left loaded, not on time.
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


def test_help_and_a_listing_import_no_server_code(shoal: Shoal, tmp_path: Path) -> None:
    assert heavy_in(loaded_by(shoal, tmp_path, "--help")) == []
    shoal.ok("get", "clusters")  # starts the background Shoal: that one is allowed to be heavy
    assert heavy_in(loaded_by(shoal, tmp_path, "get", "clusters")) == []


def test_the_cli_objectives_are_the_models() -> None:
    assert {o.value for o in CliObjective} == {o.value for o in Objective}

"""The client path stays light: parsing a command line and talking HTTP import no server code.

Every common command must answer at once (issue 37: under 0.3 s; benchmarks/cli.py measures
them), so none may import FastAPI, SQLAlchemy, uvicorn, httpx, openstack, keystoneauth1 or
Shoal's server layers; `--help` not even Rich, asyncio or pydantic (typer's coercion brings
pydantic to a command that parses an option: the floor benchmarks/cli.py measures), and a
command imports no other command's module. `shoal plan` of a document runs offline, so it
loads the document readers and the solver, but not the exact solver (OR-Tools, and pandas with
it) when the greedy answered, no store, no server settings (pydantic-settings) and no Heat
template reader for a native document. This is checked on the modules a real command left
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


# What `shoal plan` of a small document placed by the greedy must not import.
PLAN_HEAVY = (
    "ortools",
    "pandas",
    "numpy",
    "sqlalchemy",
    "alembic",
    "fastapi",
    "uvicorn",
    "httpx",
    "openstack",
    "keystoneauth1",
    "pydantic_settings",
    "shoal.settings",
    "shoal.store",
    "shoal.engine",
    "shoal.runtime",
    "shoal.api",
    "shoal.providers",
    "shoal.documents.hot",
)


def heavy_for_plan(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(f"{h}.") for h in PLAN_HEAVY)]


def test_plan_of_a_small_document_imports_no_exact_solver_nor_store(
    shoal: Shoal, tmp_path: Path
) -> None:
    for args in (
        ("plan", "examples/db-pair.yaml"),
        ("plan", "examples/three-tier.yaml", "-o", "json"),
    ):
        loaded = loaded_by(shoal, tmp_path, *args)
        assert "shoal.placement.solver" in loaded  # it did place, offline
        assert heavy_for_plan(loaded) == [], args


def test_plan_of_a_heat_template_loads_the_heat_reader(shoal: Shoal, tmp_path: Path) -> None:
    loaded = loaded_by(
        shoal,
        tmp_path,
        "plan",
        "examples/seed003/template.yaml",
        "-e",
        "examples/seed003/single.yaml",
    )
    assert "shoal.documents.hot" in loaded
    assert [m for m in heavy_for_plan(loaded) if not m.startswith("shoal.documents.hot")] == []


def test_the_reads_import_no_server_code(shoal: Shoal, tmp_path: Path) -> None:
    shoal.ok("up", "examples/db-pair.yaml")
    for args in (
        ("get", "nodes"),
        ("describe", "cluster", "db-pair"),
        ("events", "--cluster", "db-pair", "--limit", "5"),
        ("deployments", "db-pair"),
        ("workloads", "db-pair"),
    ):
        assert heavy_in(loaded_by(shoal, tmp_path, *args)) == [], args
    # a command that sends a document reads it (YAML, within bounds), and nothing of the
    # server nor the document readers: the server reads it
    dry_run = loaded_by(shoal, tmp_path, "apply", "examples/db-pair.yaml", "--dry-run")
    assert [m for m in heavy_in(dry_run) if m.split(".")[0] != "yaml"] == []
    assert "shoal.documents.loader" not in dry_run
    assert "shoal.model.cluster" not in dry_run


# Two hosts of 10 vCPUs, units of 5, 5, 4, 3, 3 with the two 5s apart: {5, 4} | {5, 3} leaves
# a 3 with nowhere to go, which no precheck sees; only the exact method proves it
# (tests/placement/test_rules.py, test_the_exact_search_proves_what_greedy_cannot).
TIGHT_INVENTORY = """
hosts:
  - {name: n1, zone: z1, vcpus: 10, ram_mb: 10240, disk_gb: 100}
  - {name: n2, zone: z1, vcpus: 10, ram_mb: 10240, disk_gb: 100}
flavors:
  - {id: c3, name: c3, vcpus: 3, ram_mb: 3072, disk_gb: 1}
  - {id: c4, name: c4, vcpus: 4, ram_mb: 4096, disk_gb: 1}
  - {id: c5, name: c5, vcpus: 5, ram_mb: 5120, disk_gb: 1}
"""
TIGHT_DOCUMENT = """
name: bins
profiles:
  c3: {type: server, flavor: c3, image: cirros}
  c4: {type: server, flavor: c4, image: cirros}
  c5: {type: server, flavor: c5, image: cirros}
node_groups:
  - {name: big, profile: c5, count: 2}
  - {name: mid, profile: c4, count: 1}
  - {name: small, profile: c3, count: 2}
groupings:
  - {name: apart, members: [big], rule: anti-affinity, scope: host}
"""


def test_the_exact_solver_is_there_when_the_greedy_cannot_answer(
    shoal: Shoal, tmp_path: Path
) -> None:
    """The lazy import is not a missing one: a document only the exact method can answer
    for (tight capacity and anti-affinity) still loads OR-Tools, which proves it infeasible."""
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(TIGHT_INVENTORY)
    document = tmp_path / "tight.yaml"
    document.write_text(TIGHT_DOCUMENT)
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), "plan", str(document), "-i", str(inventory)],
        env=shoal.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 1, explain(done)  # proven infeasible
    assert "proven by CP-SAT" in done.stdout
    assert "ortools.sat.python.cp_model" in json.loads(out.read_text())


def test_the_cli_objectives_are_the_models() -> None:
    assert {o.value for o in CliObjective} == {o.value for o in Objective}

"""What people read: node tables in natural name order, and tables that do not fold when piped
(issue 36: node tables in id order looked shuffled; `plan`, `deployments` and `workloads`
folded at 80 columns where the other tables did not)."""

from __future__ import annotations

import os
import subprocess
import sys

from shoal.cli.tables import by_name
from shoal.model.names import natural_key
from tests.cli.support import REPO, Shoal, explain


def test_natural_order() -> None:
    names = ["web-10", "web-2", "db-1-data", "web-1", "db-1", "db-10", "db-2", "bastion"]
    assert sorted(names, key=natural_key) == [
        "bastion",
        "db-1",
        "db-1-data",
        "db-2",
        "db-10",
        "web-1",
        "web-2",
        "web-10",
    ]
    rows = by_name([{"name": "a-10"}, {"name": "a-9"}, {"name": None}])
    assert [n["name"] for n in rows] == [None, "a-9", "a-10"]


PIPED = """
import sys
from shoal.cli.output import console
from shoal.cli.tables import table
t = table("t", ["a", "b", "c"])
t.add_row("x" * 70, "y" * 70, "z" * 70)
console().print(t)
"""


def test_a_piped_table_is_not_folded_at_80_columns() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", PIPED], env=env, cwd=REPO, capture_output=True, text=True, check=True
    )
    row = next(line for line in done.stdout.splitlines() if "xxx" in line)
    assert "x" * 70 in row and "y" * 70 in row and "z" * 70 in row, done.stdout


def test_plan_and_node_tables_piped(shoal: Shoal) -> None:
    plan = shoal.ok("plan", "examples/three-tier.yaml")
    lines = plan.stdout.splitlines()
    rows = [line for line in lines if line.startswith("│")]
    # one row per node (no folded continuation lines), in natural order
    nodes = [r.split("│")[1].strip() for r in rows if r.split("│")[1].strip()]
    assert len(nodes) == len(set(nodes)), plan.stdout
    web = [n for n in nodes if n.startswith("web-")]
    assert web == sorted(web, key=natural_key), explain(plan)
    shoal.ok("up", "examples/three-tier.yaml")
    scaled = shoal.ok("scale", "shop", "--nodegroup", "web", "--count", "10")
    assert scaled.returncode == 0
    table = shoal.ok("get", "nodes").stdout
    listed = [line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│")]
    assert listed == sorted(listed, key=natural_key), table
    assert listed.index("web-2") < listed.index("web-10"), table

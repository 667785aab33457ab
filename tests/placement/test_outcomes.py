"""The three placement outcomes: placed, infeasible (proven) and undecided, end to end.

"Undecided" is produced without any clock: the exact method refuses models above
`cpsat.MAX_PAIRS` item-host pairs as unknown, so setting it to 0 makes every exact step
unknown, deterministically.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shoal.api.errors import http_status
from shoal.model import Grouping, MemberRef, NodeGroup, Rule
from shoal.model.catalogs import CIRROS, default_inventory
from shoal.model.cluster import ClusterSpec, UnitPart
from shoal.model.enums import Objective
from shoal.model.profile import ServerProfile
from shoal.placement import PlacementStatus, cpsat, solve
from shoal.placement.complete import independent_parts
from shoal.placement.problem import build_problem
from shoal.service.errors import Undecided, Unplaceable, placement_refusal
from tests.placement.test_rules import BINS, bins

ROOT = Path(__file__).resolve().parents[2]

APART = Grouping("apart", (MemberRef("big"),), Rule.ANTI_AFFINITY)


def test_proven_infeasible_is_infeasible() -> None:
    result = solve(bins(APART), BINS)
    assert result.status is PlacementStatus.INFEASIBLE
    assert result.as_dict()["status"] == "infeasible"
    assert not result.undecided


def test_out_of_reach_is_undecided_never_infeasible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpsat, "MAX_PAIRS", 0)
    result = solve(bins(APART), BINS)
    assert not result.feasible
    assert result.status is PlacementStatus.UNDECIDED
    assert result.reasons[0].startswith("undecided:")
    assert "could not be placed" in result.reasons[1]
    assert result.as_dict()["status"] == "undecided"


def test_what_greedy_places_needs_no_exact_method(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpsat, "MAX_PAIRS", 0)
    result = solve(bins(), BINS, objective=Objective.PACK)
    assert result.status is PlacementStatus.PLACED
    assert result.as_dict()["status"] == "placed"


def test_the_service_refuses_undecided_with_its_own_code() -> None:
    assert placement_refusal(False) is Unplaceable
    refusal = placement_refusal(True)("cluster x cannot be placed", [])
    assert isinstance(refusal, Undecided)
    assert isinstance(refusal, Unplaceable)  # callers that catch "not placed" still do
    assert (http_status(refusal), refusal.body()["error"]["code"]) == (409, "undecided")


def test_zones_apart_are_independent_parts() -> None:
    inv = default_inventory()

    def group(name: str, zones: tuple[str, ...]) -> NodeGroup:
        server = ServerProfile(inv.flavors[1], CIRROS)
        return NodeGroup(name, (UnitPart(None, server),), count=2, zones=zones)

    spec = ClusterSpec(
        "parts",
        node_groups=(group("a", ("az1",)), group("b", ("az2",)), group("c", ("az1",))),
        groupings=(Grouping("c-apart", (MemberRef("c"),), Rule.ANTI_AFFINITY),),
    )
    problem = build_problem(spec, inv, {}, {})
    parts = independent_parts(problem)
    groups = sorted(sorted({problem.items[i].nodes[0].group for i in p}) for p in parts)
    assert groups == [["a", "c"], ["b"]]


_PLAN = """
import sys
import shoal.placement.cpsat as cpsat
cpsat.MAX_PAIRS = int(sys.argv.pop(1))
from shoal.cli.main import run
sys.argv[0] = "shoal"
run()
"""

_DOC = """
name: bins
node_groups:
  - {name: big, profile: {type: server, flavor: c5, image: cirros}, count: 2}
  - {name: mid, profile: {type: server, flavor: c4, image: cirros}, count: 1}
  - {name: small, profile: {type: server, flavor: c3, image: cirros}, count: 2}
groupings:
  - {name: apart, members: [big], rule: anti-affinity}
"""

_INV = """
hosts:
  - {name: n1, zone: z1, vcpus: 10, ram_mb: 10240, disk_gb: 100}
  - {name: n2, zone: z1, vcpus: 10, ram_mb: 10240, disk_gb: 100}
flavors:
  - {id: c3, name: c3, vcpus: 3, ram_mb: 3072, disk_gb: 1}
  - {id: c4, name: c4, vcpus: 4, ram_mb: 4096, disk_gb: 1}
  - {id: c5, name: c5, vcpus: 5, ram_mb: 5120, disk_gb: 1}
"""


@pytest.mark.parametrize(("max_pairs", "status"), [("0", "undecided"), ("250000", "infeasible")])
def test_plan_exits_1_and_names_the_outcome(tmp_path: Path, max_pairs: str, status: str) -> None:
    doc, inv = tmp_path / "bins.yaml", tmp_path / "inv.yaml"
    doc.write_text(_DOC)
    inv.write_text(_INV)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), SHOAL_HOME=str(tmp_path / "home"))
    args = [sys.executable, "-c", _PLAN, max_pairs, "plan", str(doc), "-i", str(inv)]
    done = subprocess.run([*args, "-o", "json"], env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    body = json.loads(done.stdout)
    assert (body["status"], body["feasible"]) == (status, False)
    table = subprocess.run(args, env=env, capture_output=True, text=True)
    assert table.returncode == 1
    assert ("undecided" in table.stdout) == (status == "undecided")

"""`shoal plan` with workloads: replicas -> nodes after the servers are placed, and a refusal
in the workload's own words (exit 1) when the replicas cannot all be placed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from shoal.cli.main import app

DOC = """
name: c
profiles:
  p: {type: server, flavor: m1.small, image: cirros}
node_groups:
  - {name: ctl, profile: p, count: 3, zones: [az1, az2], labels: {role: controller}}
  - {name: db, profile: p, count: 1}
workloads:
  api:
    replicas: REPLICAS
    containers:
      - {name: api, image: img, ports: [8080], resources: {cpu: 0.5, memory_mb: 256}}
    rules: [{rule: anti-affinity, scope: host}, {rule: spread, scope: zone}]
    nodes: {labels: {role: controller}}
  cache:
    replicas: 1
    containers: [{name: c, image: img, ports: [6379]}]
    rules: [{rule: affinity, scope: node, against: api}]
"""


def plan(tmp_path: Path, replicas: int, *args: str) -> tuple[int, str]:
    doc = tmp_path / "c.yaml"
    doc.write_text(DOC.replace("REPLICAS", str(replicas)))
    result = CliRunner().invoke(app, ["plan", str(doc), *args])
    return result.exit_code, result.stdout


def test_plan_shows_replicas_on_the_servers_placed(tmp_path: Path) -> None:
    code, out = plan(tmp_path, 3, "-o", "json")
    assert code == 0, out
    found = json.loads(out)
    servers = {a["node"]: a for a in found["placement"]}
    replicas = {r["replica"]: r for r in found["replicas"]}
    assert set(replicas) == {"api-1", "api-2", "api-3", "cache-1"}
    api = [r for r in replicas.values() if r["workload"] == "api"]
    assert {r["node"] for r in api} <= {"ctl-1", "ctl-2", "ctl-3"}
    assert len({servers[r["node"]]["host"] for r in api}) == 3
    assert replicas["cache-1"]["node"] in {r["node"] for r in api}
    for r in replicas.values():
        assert (r["host"], r["zone"]) == (servers[r["node"]]["host"], servers[r["node"]]["zone"])
    code, text = plan(tmp_path, 3)
    assert code == 0 and "workloads' replicas on the cluster's servers" in text


def test_plan_refuses_replicas_that_cannot_be_placed(tmp_path: Path) -> None:
    code, out = plan(tmp_path, 4, "-o", "json")
    assert code == 1, out
    found = json.loads(out)
    assert found["feasible"] is False and found["solver"] == "workloads"
    assert any("workload api's anti-affinity over host" in r for r in found["reasons"])
    assert any("binds port 8080" in r for r in found["reasons"])


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workloads"


def test_one_document_is_a_compose_deployment_or_an_anti_affine_workload() -> None:
    doc = str(EXAMPLE / "service.yaml")
    result = CliRunner().invoke(app, ["plan", doc, "-e", str(EXAMPLE / "ha.yaml"), "-o", "json"])
    assert result.exit_code == 0, result.stdout
    ha = json.loads(result.stdout)
    assert [r["replica"] for r in ha["replicas"]] == ["api-1", "api-2", "api-3"]
    assert len({r["host"] for r in ha["replicas"]}) == 3
    assert ha.get("deployments", []) == []
    args = ["plan", doc, "-e", str(EXAMPLE / "single.yaml"), "-o", "json"]
    single = json.loads(CliRunner().invoke(app, args).stdout)
    assert "replicas" not in single and [d["name"] for d in single["deployments"]] == ["api"]

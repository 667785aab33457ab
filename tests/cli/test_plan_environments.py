"""`shoal plan DOC -e ENV` for native documents: the shape and the deployments the
environments produced, before anything runs; `up`/`apply` send them as {document, environment}."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from shoal.cli.documents import document_name, read_request
from shoal.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "controller"


def plan(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["plan", *args])
    return result.exit_code, result.stdout


def test_plan_shows_both_environments_of_the_controller_example() -> None:
    doc = str(EXAMPLE / "controller.yaml")
    code, out = plan(doc, "-e", str(EXAMPLE / "ha.yaml"), "-o", "json")
    assert code == 0, out
    ha = json.loads(out)
    assert ha["shape"]["node_groups"] == [{"name": "controller", "count": 3, "role": "Controller"}]
    assert [d["nodes"] for d in ha["deployments"]] == [1, 3, 1]
    assert len({a["host"] for a in ha["placement"] if a["node"].startswith("controller")}) == 3
    code, out = plan(doc, "-e", str(EXAMPLE / "single.yaml"), "-o", "json")
    assert code == 0, out
    single = json.loads(out)
    assert single["shape"]["node_groups"] == []
    assert "controller" in single["shape"]["instances"]
    assert [(d["name"], d["target"]) for d in single["deployments"]] == [
        ("database", "db"),
        ("api", "controller"),
        ("balancer", "lb"),
    ]
    code, out = plan(doc, "-e", str(EXAMPLE / "single.yaml"))
    assert code == 0 and "deployments (in dependency order)" in out


def test_plan_with_a_bad_environment_exits_2(tmp_path: Path) -> None:
    env = tmp_path / "bad.yaml"
    env.write_text("parameters: {controllers: 99}\nroles: {Nobody: {count: 1}}\n")
    code, out = plan(str(EXAMPLE / "controller.yaml"), "-e", str(env), "-o", "json")
    assert code == 2, out
    paths = {p["path"] for p in json.loads(out)["problems"]}
    assert paths == {"/environment/0/parameters/controllers", "/environment/0/roles/Nobody"}
    code, _ = plan(str(EXAMPLE / "controller.yaml"), "-e", str(tmp_path / "missing.yaml"))
    assert code == 2


def test_up_sends_a_native_document_with_its_environments() -> None:
    body, kind = read_request(str(EXAMPLE / "controller.yaml"), [EXAMPLE / "ha.yaml"])
    assert kind == "application/json"
    sent = json.loads(body)
    assert sent["environment"] == [{"roles": {"Controller": {"count": 3, "anti_affinity": "host"}}}]
    assert document_name(body) == "controller"

"""The shipped alert rules and dashboard (issue 27): `promtool check rules` and the rules' own
unit tests (`promtool test rules`, Debian's prometheus package), and every series the rules
and the Grafana dashboard name is one `shoal server` exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.observability.conftest import Api

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RULES = DEPLOY / "prometheus" / "shoal-alerts.yml"
RULE_TESTS = DEPLOY / "prometheus" / "shoal-alerts.test.yml"
DASHBOARD = DEPLOY / "grafana" / "shoal-dashboard.json"
NAME = re.compile(r"\bshoal_[a-z0-9_]+")
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count")}


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool (Debian's prometheus package) is needed: .ci/run installs it"
    return found


def test_the_rules_are_valid_and_pass_their_unit_tests() -> None:
    for args in (["check", "rules", RULES.name], ["test", "rules", RULE_TESTS.name]):
        run = subprocess.run(
            [promtool(), *args], cwd=RULES.parent, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stdout + run.stderr


def test_the_rules_cover_what_should_page() -> None:
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    alerts = {r["alert"] for r in rules}
    assert alerts >= {
        "ShoalActionsStuckPastLease",
        "ShoalRepairsFailing",
        "ShoalClusterInError",
        "ShoalPlacementRefused",
        "ShoalProviderErrors",
        "ShoalNoManager",
    }
    tested = set(re.findall(r"alertname: (\w+)", RULE_TESTS.read_text()))
    assert tested == alerts


def expressions() -> list[str]:
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    board = json.loads(DASHBOARD.read_text())
    return [r["expr"] for r in rules] + [
        t["expr"] for p in board["panels"] for t in p.get("targets", [])
    ]


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
async def test_rules_and_dashboard_name_only_exported_series(api: Api) -> None:
    r = await api.call("GET", "/metrics")
    assert r.status_code == 200
    exported: set[str] = set()
    for family in text_string_to_metric_families(r.text):
        exported.add(family.name)
        exported.update(family.name + s for s in SUFFIXES.get(family.type, ()))
    named = {n for e in expressions() for n in NAME.findall(e)}
    assert named, "no series named?"
    assert named <= exported, sorted(named - exported)
    board = json.loads(DASHBOARD.read_text())
    assert all(p["targets"] for p in board["panels"])

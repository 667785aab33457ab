"""`shoal plan TEMPLATE -e ENV`: offline placement of a HOT template, with its exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from shoal.cli.main import app

TRIPLEO = Path(__file__).resolve().parents[2] / "data" / "hot" / "tripleo-style"


def plan(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["plan", *args])
    return result.exit_code, result.stdout


def test_plan_ha_and_single_from_one_template() -> None:
    t, common = str(TRIPLEO / "overcloud.yaml"), str(TRIPLEO / "common.yaml")
    code, out = plan(t, "-e", common, "-e", str(TRIPLEO / "ha.yaml"), "-o", "json")
    assert code == 0, out
    ha = json.loads(out)
    assert len([a for a in ha["placement"] if a["kind"] == "server"]) == 5
    code, out = plan(t, "-e", common, "--environment", str(TRIPLEO / "single.yaml"), "-o", "json")
    assert code == 0, out
    single = json.loads(out)
    assert [a["node"] for a in single["placement"]] == ["Controller-1-server", "Controller-1-Data"]


def test_plan_lists_what_was_ignored(tmp_path: Path) -> None:
    t = tmp_path / "t.yaml"
    t.write_text(
        "heat_template_version: 2016-10-14\nresources:\n"
        "  g:\n    type: OS::Heat::ResourceGroup\n    properties:\n"
        "      count: 2\n      removal_policies: [{resource_list: ['0']}]\n"
        "      resource_def:\n"
        "        {type: OS::Nova::Server, properties: {flavor: m1.tiny, image: cirros}}\n"
    )
    env = tmp_path / "e.yaml"
    env.write_text("event_sinks: []\n")
    code, out = plan(str(t), "-e", str(env), "-o", "json")
    assert code == 0, out
    notices = {n["path"] for n in json.loads(out)["notices"]}
    assert {"/environments/0/event_sinks", "/resources/g/properties/removal_policies"} <= notices


def test_plan_invalid_template_exits_2_with_every_problem(tmp_path: Path) -> None:
    t = tmp_path / "bad.yaml"
    t.write_text(
        "heat_template_version: 2014-10-16\nresources:\n"
        "  a: {type: OS::Nova::Server, properties: {flavor: {repeat: {}}, image: nope}}\n"
        "  b: {type: OS::Zaqar::Queue}\n"
    )
    code, out = plan(str(t), "-o", "json")
    assert code == 2, out
    paths = {p["path"] for p in json.loads(out)["problems"]}
    assert {
        "/resources/a/properties/flavor/repeat",
        "/resources/a/properties/image",
        "/resources/b/type",
    } <= paths


def test_plan_missing_environment_file_is_exit_2(tmp_path: Path) -> None:
    code, _ = plan(str(TRIPLEO / "overcloud.yaml"), "-e", str(tmp_path / "nope.yaml"))
    assert code == 2

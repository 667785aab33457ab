"""The wire shape Heat's agents read and the signal they send back (model/heat_agent.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from shoal.model.heat_agent import (
    MAX_SIGNAL_BYTES,
    CollectorSettings,
    declared_outputs,
    default_config_id,
    failure_reason,
    parse_signal,
    redacted,
    server_metadata,
)
from shoal.model.problems import InvalidDocument
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    DeployAction,
    HookGroup,
    IOType,
    ResolvedDeployment,
    SoftwareConfig,
)

CONFIG = SoftwareConfig(
    name="web",
    group=HookGroup.SCRIPT,
    config="#!/bin/sh\necho hi > $heat_outputs_path.result\n",
    inputs=(
        ConfigInput("port", IOType.NUMBER, default=80, description="the port"),
        ConfigInput("backends", IOType.LIST),
        ConfigInput("flag", IOType.BOOLEAN),
        ConfigInput("absent", IOType.STRING),
    ),
    outputs=(ConfigOutput("result"), ConfigOutput("oops", error_output=True)),
    options={"opt": 1},
)


BASE = ResolvedDeployment(
    deployment="web-deploy",
    node="app-0",
    action=DeployAction.CREATE,
    config=CONFIG,
    inputs={"backends": ["10.0.0.1", "10.0.0.2"], "flag": True, "extra": "s3cr3t"},
    secret_inputs=frozenset({"extra"}),
    digest="d1",
)


def resolved(**over: Any) -> ResolvedDeployment:
    return replace(BASE, **over)


def entries(md: object) -> list[dict[str, Any]]:
    """The served deployments, as the agent sees them after JSON."""
    decoded = json.loads(json.dumps(md))
    assert isinstance(decoded, dict)
    return list(decoded["deployments"])


def url(r: ResolvedDeployment) -> str:
    return f"http://127.0.0.1:9/signal/{r.node}/{r.deployment}?secret=s"


def test_metadata_has_heats_shape() -> None:
    md = server_metadata([resolved()], url, server_id="srv-1", stack_id="c1", creation_time="t")
    assert list(md) == ["deployments"]
    (entry,) = entries(md)
    assert set(entry) == {
        "id",
        "name",
        "group",
        "creation_time",
        "config",
        "inputs",
        "outputs",
        "options",
    }
    assert entry["name"] == "web-deploy"
    assert entry["group"] == "script"
    assert entry["config"] == CONFIG.config
    assert entry["options"] == {"opt": 1}
    assert entry["outputs"] == [
        {"name": "result", "type": "String", "error_output": False},
        {"name": "oops", "type": "String", "error_output": True},
    ]
    inputs = entry["inputs"]
    by_name = {i["name"]: i for i in inputs}
    # declared first, in order, then undeclared values, then the derived deploy_* inputs
    assert [i["name"] for i in inputs] == [
        "port",
        "backends",
        "flag",
        "absent",
        "extra",
        "deploy_server_id",
        "deploy_action",
        "deploy_stack_id",
        "deploy_resource_name",
        "deploy_signal_transport",
        "deploy_signal_id",
        "deploy_signal_verb",
    ]
    assert by_name["port"] == {
        "name": "port",
        "type": "Number",
        "description": "the port",
        "default": 80,
        "value": "80",  # the script hook puts values into the environment: text only
    }
    # a CommaDelimitedList reaches a script as Heat writes one, not as JSON
    assert by_name["backends"]["value"] == "10.0.0.1,10.0.0.2"
    assert by_name["flag"]["value"] == "true"
    assert by_name["absent"]["value"] == ""
    assert by_name["extra"] == {"name": "extra", "type": "String", "value": "s3cr3t"}
    assert by_name["deploy_server_id"]["value"] == "srv-1"
    assert by_name["deploy_action"]["value"] == "CREATE"
    assert by_name["deploy_stack_id"]["value"] == "c1"
    assert by_name["deploy_signal_transport"]["value"] == "CFN_SIGNAL"
    assert by_name["deploy_signal_id"]["value"] == url(resolved())
    assert by_name["deploy_signal_verb"]["value"] == "POST"
    # no Keystone credentials: heat-config-notify would take the heatclient path instead
    assert "deploy_auth_url" not in by_name
    json.dumps(md)  # served as JSON as is


def test_non_script_groups_keep_typed_values() -> None:
    config = SoftwareConfig(
        "c", HookGroup.ANSIBLE, "- hosts: localhost", inputs=(ConfigInput("n", IOType.NUMBER),)
    )
    md = server_metadata([resolved(config=config, inputs={"n": 3})], url, server_id="s")
    (entry,) = entries(md)
    assert entry["inputs"][0] == {"name": "n", "type": "Number", "value": 3}


def test_config_id_changes_with_what_must_run_again() -> None:
    first = default_config_id(resolved())
    assert first == default_config_id(resolved())
    assert first != default_config_id(resolved(digest="d2"))
    assert first != default_config_id(resolved(action=DeployAction.UPDATE))
    assert first != default_config_id(resolved(node="app-1"))
    md = server_metadata([resolved()], url, server_id="s", config_id=lambda r: "run-7")
    (entry,) = entries(md)
    assert entry["id"] == "run-7"


def test_order_is_kept_and_collector_settings_are_served() -> None:
    a, b = resolved(deployment="b-first"), resolved(deployment="a-second")
    md = server_metadata(
        [a, b],
        url,
        server_id="s",
        collector=CollectorSettings("http://127.0.0.1:1/md", polling_interval=2.0),
    )
    names = [e["name"] for e in entries(md)]
    assert names == ["b-first", "a-second"]
    assert md["os-collect-config"] == {
        "collectors": ["ec2", "request", "local"],
        "polling_interval": 2.0,
        "request": {"metadata_url": "http://127.0.0.1:1/md"},
    }


def test_redacted_hides_secret_values() -> None:
    md = server_metadata([resolved()], url, server_id="s")
    (entry,) = entries(md)
    shown = redacted(entry["inputs"], frozenset({"extra"}))
    assert {"name": "extra", "type": "String", "value": "******"} in shown
    assert "s3cr3t" not in json.dumps(shown)


def test_parse_signal_reads_what_heat_config_notify_sends() -> None:
    # the script hook's stdout: outputs at the top level beside the deploy_* fields
    body = json.dumps(
        {
            "result": "hi\n",
            "deploy_stdout": "out",
            "deploy_stderr": "err",
            "deploy_status_code": 0,
        }
    )
    signal = parse_signal(body.encode())
    assert signal.status_code == 0
    assert (signal.stdout, signal.stderr) == ("out", "err")
    assert dict(signal.outputs) == {"result": "hi\n"}
    assert failure_reason(signal, CONFIG) is None
    assert declared_outputs(signal, CONFIG) == {"result": "hi\n"}


@pytest.mark.parametrize(
    ("body", "code"),
    [("{}", 0), ("", 0), ('{"deploy_status_code": "3"}', 3), ('{"deploy_status_code": 2}', 2)],
)
def test_parse_signal_status_codes(body: str, code: int) -> None:
    assert parse_signal(body).status_code == code


def test_failure_reasons() -> None:
    failed = parse_signal({"deploy_status_code": 5, "deploy_stderr": "boom"})
    assert failure_reason(failed, CONFIG) == "Deployment exited with non-zero status code: 5"
    error_output = parse_signal({"deploy_status_code": 0, "oops": "disk full", "other": 1})
    assert failure_reason(error_output, CONFIG) == "oops: disk full"
    assert declared_outputs(error_output, CONFIG) == {"oops": "disk full"}


def test_parse_signal_reports_every_bad_field() -> None:
    with pytest.raises(InvalidDocument) as caught:
        parse_signal({"deploy_stdout": 1, "deploy_stderr": [], "deploy_status_code": "x"})
    paths = [p.path for p in caught.value.problems]
    assert paths == ["/deploy_stdout", "/deploy_stderr", "/deploy_status_code"]


@pytest.mark.parametrize("body", ["[1]", "not json", b"\xff\xfe"])
def test_parse_signal_rejects_non_objects(body: str | bytes) -> None:
    with pytest.raises(InvalidDocument):
        parse_signal(body)


def test_parse_signal_is_bounded() -> None:
    with pytest.raises(InvalidDocument, match="at most"):
        parse_signal(b"{" + b" " * MAX_SIGNAL_BYTES + b"}")


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        (b"[" * 500_000 + b"]" * 500_000, ""),
        (json.dumps({"deploy_status_code": 10**29}).encode(), "/deploy_status_code"),
        (json.dumps({"deploy_status_code": str(-(10**12))}).encode(), "/deploy_status_code"),
        (b'{"out": ' + b"[" * 40 + b"]" * 40 + b"}", "/out"),
        (json.dumps({"a/b": 2**64}).encode(), "/a~1b"),
        (b'{"out": 1e999}', "/out"),
    ],
)
def test_a_signal_too_deep_or_with_numbers_out_of_bounds_is_refused(
    body: bytes, pointer: str
) -> None:
    """Issue 29: each was a 500 (RecursionError, OverflowError) or a value no store reads."""
    with pytest.raises(InvalidDocument) as caught:
        parse_signal(body)
    assert [p.path for p in caught.value.problems] == [pointer]

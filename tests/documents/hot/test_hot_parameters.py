"""Parameters (types, constraints, hidden), parameter groups, conditions, get_file, versions."""

from __future__ import annotations

from shoal.documents.hot import HotResult, read_body
from shoal.model.catalogs import default_inventory


def read(template: dict[str, object], **body: object) -> HotResult:
    return read_body({"template": template, **body}, default_inventory())


def out(params: dict[str, object], given: dict[str, object], name: str = "p") -> object:
    template = {
        "heat_template_version": "2016-10-14",
        "parameters": params,
        "outputs": {"o": {"value": {"get_param": name}}},
    }
    result = read(template, parameters=given)
    assert not result.problems, result.problems
    return result.outputs["o"]


def messages(result: HotResult) -> dict[str, str]:
    return {p.path: p.message for p in result.problems}


def test_types_convert_as_heat_does() -> None:
    assert out({"p": {"type": "number"}}, {"p": "3"}) == 3
    assert out({"p": {"type": "number"}}, {"p": "2.5"}) == 2.5
    assert out({"p": {"type": "comma_delimited_list"}}, {"p": "a, b,c"}) == ["a", " b", "c"]
    assert out({"p": {"type": "json"}}, {"p": '{"k": [1]}'}) == {"k": [1]}
    assert out({"p": {"type": "boolean"}}, {"p": "yes"}) is True
    assert out({"p": {"type": "string"}}, {"p": 7}) == "7"


def test_constraints_checked_on_values_and_defaults() -> None:
    template = {
        "heat_template_version": "2017-02-24",
        "parameters": {
            "n": {"type": "number", "constraints": [{"range": {"min": 1, "max": 3}}]},
            "s": {"type": "string", "constraints": [{"allowed_values": ["a", "b"]}]},
            "l": {"type": "string", "default": "toolong", "constraints": [{"length": {"max": 3}}]},
            "m": {"type": "number", "constraints": [{"modulo": {"step": 2, "offset": 1}}]},
            "c": {
                "type": "string",
                "default": "x",
                "constraints": [{"custom_constraint": "nova.flavor"}],
            },
        },
        "outputs": {k: {"value": {"get_param": k}} for k in ("n", "s", "m", "c")},
    }
    result = read(template, parameters={"n": 5, "s": "z", "m": 4})
    found = messages(result)
    assert "range 5 is above the maximum 3" in found["/parameters/n"]  # where the value was given
    assert any("not one of the allowed values" in m for m in found.values())
    assert "/template/parameters/l/default" in found
    assert any("multiple of 2" in m for m in found.values())
    assert any("custom constraint" in n.message for n in result.notices)


def test_hidden_values_never_appear_in_messages() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "parameters": {
            "pw": {"type": "string", "hidden": True, "constraints": [{"allowed_values": ["ok"]}]}
        },
        "outputs": {"o": {"value": {"get_param": "pw"}}},
    }
    result = read(template, parameters={"pw": "hunter2-secret"})
    assert result.problems
    assert "hunter2" not in " ".join(p.message for p in result.problems)


def test_missing_value_and_parameter_groups() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "parameters": {"a": {"type": "string"}, "b": {"type": "string", "default": "x"}},
        "parameter_groups": [{"parameters": ["a", "b"]}, {"parameters": ["b", "zz"]}],
        "outputs": {"o": {"value": {"get_param": "a"}}},
    }
    found = messages(read(template))
    assert "needs a value" in found["/template/parameters/a"]
    assert "more than one group" in found["/template/parameter_groups/1/parameters/0"]
    assert "unknown parameter" in found["/template/parameter_groups/1/parameters/1"]


def test_conditions_switch_resources_and_outputs() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "parameters": {"env": {"type": "string", "default": "prod"}},
        "conditions": {
            "is_prod": {"equals": [{"get_param": "env"}, "prod"]},
            "is_dev": {"not": "is_prod"},
        },
        "resources": {
            "big": {
                "type": "OS::Nova::Server",
                "condition": "is_prod",
                "properties": {"flavor": "m1.large", "image": "cirros"},
            },
            "small": {
                "type": "OS::Nova::Server",
                "condition": "is_dev",
                "properties": {"flavor": "m1.tiny", "image": "cirros"},
            },
        },
        "outputs": {"o": {"value": "dev only", "condition": "is_dev"}},
    }
    prod = read(template)
    assert prod.spec is not None and [i.name for i in prod.spec.instances] == ["big"]
    assert "o" not in prod.outputs
    dev = read(template, parameters={"env": "dev"})
    assert dev.spec is not None and [i.name for i in dev.spec.instances] == ["small"]


def test_condition_cycle_and_unknown_condition() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "conditions": {"a": {"not": "b"}, "b": {"not": "a"}},
        "resources": {"r": {"type": "OS::Heat::None", "condition": "nope"}},
    }
    found = messages(read(template))
    assert "unknown condition 'nope'" in found["/template/resources/r/condition"]


def test_get_file_and_select() -> None:
    template = {
        "heat_template_version": "2013-05-23",
        "outputs": {
            "f": {"value": {"get_file": "script.sh"}},
            "s": {"value": {"Fn::Select": ["1", ["a", "b"]]}},
        },
    }
    result = read(template, files={"script.sh": "#!/bin/sh\necho hi\n"})
    assert result.outputs == {"f": "#!/bin/sh\necho hi\n", "s": "b"}
    missing = read(
        {"heat_template_version": "2013-05-23", "outputs": {"f": {"value": {"get_file": "x"}}}}
    )
    assert any("'x' was not given" in p.message for p in missing.problems)


def test_each_version_name_and_alias_is_read() -> None:
    for name in (
        "2013-05-23",
        "2015-10-15",
        "newton",
        "ocata",
        "pike",
        "queens",
        "rocky",
        "wallaby",
    ):
        assert not read({"heat_template_version": name}).problems
    assert read({"heat_template_version": "2099-01-01"}).problems


def test_str_split_needs_2015_10_15() -> None:
    template = {
        "heat_template_version": "2015-04-30",
        "outputs": {"o": {"value": {"str_split": [",", "a"]}}},
    }
    assert any("2015-10-15" in p.message for p in read(template).problems)


def test_server_group_max_server_per_host() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "sg": {
                "type": "OS::Nova::ServerGroup",
                "properties": {"policies": ["anti-affinity"], "rules": {"max_server_per_host": 2}},
            },
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 4,
                    "resource_def": {
                        "type": "OS::Nova::Server",
                        "properties": {
                            "flavor": "m1.tiny",
                            "image": "cirros",
                            "scheduler_hints": {"group": {"get_resource": "sg"}},
                        },
                    },
                },
            },
        },
    }
    result = read(template)
    assert result.spec is not None, result.problems
    assert result.spec.groupings[0].max_per_domain == 2

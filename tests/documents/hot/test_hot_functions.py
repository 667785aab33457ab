"""Intrinsic functions, one by one, against Heat's documented examples and version gates."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoal.documents.hot import read_body
from shoal.documents.hot.functions import replace_all
from shoal.model import InvalidDocument
from shoal.model.catalogs import default_inventory


def outputs(version: str, value: object, params: dict[str, object] | None = None) -> object:
    """The `out` output of a template evaluating `value`."""
    body = {
        "heat_template_version": version,
        "parameters": {
            k: {"type": "json" if isinstance(v, dict | list) else "string", "default": v}
            for k, v in (params or {}).items()
        },
        "outputs": {"out": {"value": value}},
    }
    result = read_body(body, default_inventory())
    assert not result.problems, result.problems
    return result.outputs["out"]


def problems(version: str, value: object) -> list[str]:
    body = {"heat_template_version": version, "outputs": {"out": {"value": value}}}
    return [f"{p.path}: {p.message}" for p in read_body(body, default_inventory()).problems]


def test_str_replace_as_heat_documents() -> None:
    value = {"str_replace": {"template": "http://$host/wp", "params": {"$host": "10.0.0.1"}}}
    assert outputs("2013-05-23", value) == "http://10.0.0.1/wp"


def test_str_replace_longest_key_first_and_no_rescan() -> None:
    value = {"str_replace": {"template": "$var $var2", "params": {"$var": "a$var2", "$var2": "b"}}}
    assert outputs("2016-10-14", value) == "a$var2 b"


def test_str_replace_strict_and_vstrict() -> None:
    strict = {"str_replace_strict": {"template": "x", "params": {"y": "1"}}}
    assert any("not found in the template: y" in p for p in problems("2017-02-24", strict))
    # a key inside a longer key's match is not found either (Heat replaces the longer first)
    hidden = {"str_replace_strict": {"template": "abc", "params": {"abc": "X", "b": "Y"}}}
    assert any("not found in the template: b" in p for p in problems("2017-02-24", hidden))
    for empty in ("", None, [], {}):
        vstrict = {"str_replace_vstrict": {"template": "y", "params": {"y": empty}}}
        assert any("undefined or empty value" in p for p in problems("2017-09-01", vstrict))


def test_list_join_and_multiple_lists() -> None:
    assert outputs("2014-10-16", {"list_join": [", ", ["a", "b"]]}) == "a, b"
    assert outputs("2015-10-15", {"list_join": ["-", ["a"], ["b", "c"]]}) == "a-b-c"
    assert problems("2014-10-16", {"list_join": ["-", ["a"], ["b"]]})


def test_fn_join_only_in_2013() -> None:
    assert outputs("2013-05-23", {"Fn::Join": ["", ["a", "b"]]}) == "ab"
    assert any("removed" in p for p in problems("2014-10-16", {"Fn::Join": ["", ["a"]]}))


def test_get_param_paths() -> None:
    params = {"conf": {"a": [10, 20]}}
    assert outputs("2016-10-14", {"get_param": ["conf", "a", 1]}, params) == 20


def test_conditions_functions() -> None:
    assert outputs("2016-10-14", {"if": [{"equals": [1, 1]}, "yes", "no"]}) == "yes"
    assert outputs("2016-10-14", {"not": {"equals": ["a", "b"]}}) is True
    assert outputs("2016-10-14", {"and": [True, {"or": [False, True]}]}) is True
    assert outputs("2017-09-01", {"contains": ["a", ["a", "b"]]}) is True


def test_if_without_else_from_wallaby() -> None:
    assert outputs("2021-04-16", {"x": {"if": [False, "v"]}, "y": 1}) == {"y": 1}
    assert problems("2018-08-31", {"if": [False, "v"]})


def test_repeat_permutations() -> None:
    value = {"repeat": {"for_each": {"%p%": ["80", "443"], "%h%": ["a"]}, "template": "%h%:%p%"}}
    assert outputs("2015-04-30", value) == ["a:80", "a:443"]
    zipped = {
        "repeat": {
            "for_each": {"<a>": ["1", "2"], "<b>": ["x", "y"]},
            "template": "<a><b>",
            "permutations": False,
        }
    }
    assert outputs("2017-09-01", zipped) == ["1x", "2y"]


def test_maps_lists_and_strings() -> None:
    assert outputs("2016-04-08", {"map_merge": [{"a": 1}, {"a": 2, "b": 3}]}) == {"a": 2, "b": 3}
    assert outputs(
        "2016-10-14", {"map_replace": [{"k": "v"}, {"keys": {"k": "K"}, "values": {"v": "V"}}]}
    ) == {"K": "V"}
    assert outputs("2015-10-15", {"str_split": [",", "a,b,c", 1]}) == "b"
    assert outputs("2017-09-01", {"list_concat": [["a"], ["b"]]}) == ["a", "b"]
    assert outputs("2017-09-01", {"list_concat_unique": [["a", "b"], ["b"]]}) == ["a", "b"]
    assert outputs("2017-02-24", {"filter": [[None, ""], ["a", None, ""]]}) == ["a"]
    assert outputs("2015-04-30", {"digest": ["sha256", "x"]}) == hashlib.sha256(b"x").hexdigest()


def test_make_url() -> None:
    value = {
        "make_url": {
            "scheme": "https",
            "host": "example.com",
            "port": 8443,
            "path": "/v1/x",
            "query": {"a": "1 2"},
        }
    }
    assert (
        outputs("2017-09-01", value) == "https://example.com:8443/v1/x?a=1+2"
    )  # urlencode, as Heat


def test_version_gate_names_the_function_and_version() -> None:
    found = problems("2014-10-16", {"repeat": {"for_each": {"x": [1]}, "template": "x"}})
    assert any("'repeat' needs heat_template_version 2015-04-30" in p for p in found)


def test_yaql_is_unsupported_not_a_crash() -> None:
    found = problems("2016-10-14", {"yaql": {"expression": "1", "data": {}}})
    assert any("yaql" in p for p in found)


def test_get_attr_stays_symbolic_and_value_resolves() -> None:
    body = {
        "heat_template_version": "2016-10-14",
        "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": {"a": "b"}}}},
        "outputs": {"out": {"value": {"get_attr": ["v", "value", "a"]}}},
    }
    assert read_body(body, default_inventory()).outputs["out"] == "b"


_texts = st.text(alphabet="abc$%_", min_size=0, max_size=12)


@given(
    template=_texts,
    params=st.dictionaries(st.text(alphabet="abc$%", min_size=1, max_size=4), _texts, max_size=4),
)
def test_str_replace_matches_heat_reference(template: str, params: dict[str, str]) -> None:
    """Heat's documented rule: longest key first; text already replaced is never scanned again."""

    def reference(text: str, keys: list[str]) -> str:
        if not keys:
            return text
        return params[keys[0]].join(reference(part, keys[1:]) for part in text.split(keys[0]))

    keys = sorted(params, key=lambda k: (-len(k), k))
    assert replace_all(template, params) == reference(template, keys)
    body = {"str_replace": {"template": template, "params": params}}
    assert outputs("2016-10-14", body) == reference(template, keys)


@given(
    items=st.lists(st.text(alphabet="xyz", max_size=5), max_size=5),
    delim=st.sampled_from(["", ",", " - "]),
)
def test_list_join_of_get_param_equals_python_join(items: list[str], delim: str) -> None:
    value = {"list_join": [delim, {"get_param": "items"}]}
    assert outputs("2016-10-14", value, {"items": items}) == delim.join(items)


@given(name=st.text(alphabet="abcdef", min_size=1, max_size=8))
def test_str_replace_of_list_join_of_get_param(name: str) -> None:
    value = {
        "str_replace": {
            "template": "host-NAME",
            "params": {"NAME": {"list_join": ["-", [{"get_param": "n"}, "x"]]}},
        }
    }
    assert outputs("2016-10-14", value, {"n": name}) == f"host-{name}-x"


def test_bad_function_arguments_are_problems_with_pointers() -> None:
    found = problems("2016-10-14", {"list_join": "nope"})
    assert found and found[0].startswith("/outputs/out/value/list_join")


def test_loader_raises_invalid_document_not_a_traceback() -> None:
    from shoal.documents import load_cluster

    with pytest.raises(InvalidDocument):
        load_cluster("heat_template_version: 1999-01-01\n", default_inventory())

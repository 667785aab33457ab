"""Bounded reading of hostile documents (issue 29): every bomb is a problem at its pointer.

The same corpus runs against a real server in tests/hostile/; here the readers are called
directly, so a regression names the reader, and the bounds' edges are checked.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from shoal.documents.files import read_bytes
from shoal.documents.hot.evaluator import MAX_VALUE_ITEMS
from shoal.documents.hot.files import MAX_FILES, MAX_FILES_CHARS
from shoal.documents.hot.load import read_body
from shoal.documents.hot.outputs import MAX_OUTPUT_PARTS
from shoal.documents.hot.sizes import MAX_VALUE_DEPTH, Sizes
from shoal.documents.loader import cluster_from_tree
from shoal.documents.syntax import MAX_DEPTH, parse
from shoal.model import InvalidDocument, Problem
from shoal.model.catalogs import default_inventory
from shoal.model.members import MemberRef
from shoal.model.outputs import ClusterOutput, OutputStatus, TextTemplate
from shoal.model.software import MemberFactsInput, NodeFact, NodeFacts, SoftwareSpec
from shoal.model.textreplace import OverBudget, replaced
from shoal.planning.outputs import MAX_RESULT_CHARS, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import hostile_cases


def problems_of(body: bytes | str) -> list[Problem]:
    with pytest.raises(InvalidDocument) as caught:
        cluster_from_tree(parse(body), default_inventory())
    return caught.value.problems


def messages(body: bytes | str) -> str:
    return "\n".join(f"{p.path} {p.message}" for p in problems_of(body))


REFUSED = [c for c in hostile_cases.cases() if c.path == "/v1/clusters" and c.refused]


@pytest.mark.parametrize("case", REFUSED, ids=[c.name for c in REFUSED])
def test_every_hostile_document_is_a_problem(case: hostile_cases.Case) -> None:
    assert problems_of(case.body)


def test_alias_bombs_are_refused_before_objects_are_built() -> None:
    said = messages(hostile_cases.laughs())
    assert "once its aliases are expanded" in said
    assert "line " in said  # where the expansion passed the bound
    # Small repeats stay fine, merge keys included.
    tree = parse("a: &a {x: 1}\nb: [*a, *a]\nc: {<<: *a, y: 2}\n")
    assert tree == [("a", [("x", 1)]), ("b", [[("x", 1)], [("x", 1)]]), ("c", [("x", 1), ("y", 2)])]


def test_a_long_text_aliased_many_times_counts_as_its_copies() -> None:
    text = "t: &t " + "x" * 200_000 + "\nl: [" + ", ".join(["*t"] * 100) + "]\n"
    assert "once its aliases are expanded" in messages(text)


@pytest.mark.parametrize("text", ["a: &r {a: *r}", "a: &r [1, *r]"])
def test_recursive_aliases_are_refused(text: str) -> None:
    assert "inside its own anchor" in messages(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",
        '{"a": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}",
        "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    ],
)
def test_depth_is_bounded_in_json_and_yaml(text: str) -> None:
    assert "nested too deeply" in messages(text)


@pytest.mark.parametrize(("head", "n"), [("", MAX_DEPTH), ("a: ", MAX_DEPTH - 1)])
def test_depth_at_the_bound_still_parses(head: str, n: int) -> None:
    assert parse(head + "[" * n + "]" * n) is not None


def test_replacement_is_bounded_in_work_and_size() -> None:
    assert replaced("a-b", {"a": "1", "b": "22", "": "x"})[0] == "1-22"
    with pytest.raises(OverBudget):
        replaced("k" * 1000, {"k": "v" * 2000})
    with pytest.raises(OverBudget):
        replaced("k1" * 25_000, {f"k{i}": "v" for i in range(50_000)}, max_work=10_000)
    # 3,000 keys once overflowed the stack (one recursion per key)
    assert replaced("k1 " * 10, {f"k{i}": "v" for i in range(3000)})[0] == "v " * 10


def _body(value: object, version: str = "2018-08-31") -> dict[str, object]:
    props = {"flavor": "m1.tiny", "image": "cirros", "metadata": {"m": value}}
    template = {
        "heat_template_version": version,
        "resources": {"web": {"type": "OS::Nova::Server", "properties": props}},
    }
    return {"stack_name": "s", "template": template}


def hot_problems(value: object, version: str = "2018-08-31") -> str:
    result = read_body(_body(value, version), default_inventory())
    return "\n".join(f"{p.path} {p.message}" for p in result.problems)


def test_functions_that_would_make_too_much_are_refused_at_their_pointer() -> None:
    rep = {
        "repeat": {
            "for_each": {"<%a%>": [str(i) for i in range(400)]},
            "template": "<%a%>" + "x" * 30_000,
        }
    }
    said = hot_problems({"list_join": [",", rep]})
    assert "/template/resources/web/properties/metadata/m/list_join/1/repeat" in said
    assert "would make more than 8388608 characters" in said


def test_digest_shake_and_huge_indexes_are_problems() -> None:
    assert "unknown digest algorithm" in hot_problems({"digest": ["shake_128", "x"]})
    assert "sha256" not in hot_problems({"digest": ["sha256", "x"]})
    said = hot_problems({"Fn::Select": ["9" * 5000, ["a"]]}, "2014-10-16")
    assert "a text of 5000 characters is not an index" in said
    assert "/metadata/m/Fn::Select" in said


def test_nested_template_fan_out_stops_at_a_thousand_resources() -> None:
    body = json.loads(hostile_cases._fanout(5, 50))
    said = "\n".join(p.message for p in read_body(body, default_inventory()).problems)
    assert "more than 1000 resources in all" in said


def test_native_patterns_run_without_backtracking_or_are_refused() -> None:
    doc = """
name: c
parameters:
  p: {type: string, default: "%s", constraints: {allowed_pattern: '%s'}}
profiles:
  p: {type: server, flavor: m1.tiny, image: cirros}
node_groups:
  - {name: web, profile: p, count: 1}
"""
    said = messages(doc % ("a" * 40 + "!", "(a+)+$"))
    assert "must match the pattern" in said
    said = messages(doc % ("abc", "(?=a)abc"))
    assert "/parameters/p/constraints/allowed_pattern" in said
    assert "RE2" in said


def test_hot_lookahead_patterns_are_not_run_but_noticed() -> None:
    template = {
        "heat_template_version": "2016-10-14",
        "parameters": {
            "pw": {
                "type": "string",
                "default": "Abc123!",
                "constraints": [{"allowed_pattern": "(?=.*\\d)^.*"}],
            }
        },
        "resources": {"web": hostile_cases.SERVER},
    }
    result = read_body({"stack_name": "s", "template": template}, default_inventory())
    assert not result.problems
    assert any("not checked" in n.message for n in result.notices)


def test_an_output_that_would_expand_is_refused_at_submit() -> None:
    said = messages(hostile_cases._native_output("x"))
    assert "/outputs/boom/value" in said and "would make about" in said


def test_an_output_over_the_bound_at_get_time_is_pending_not_built() -> None:
    nodes = [
        NodeFacts(f"app-{i}", MemberRef("app"), i, f"10.0.0.{i}", "z", "h", True)
        for i in range(1, 3)
    ]
    inner = TextTemplate("B" * 60_000, {"B": MemberFactsInput(MemberRef("app"), NodeFact.ADDRESS)})
    out = ClusterOutput("boom", TextTemplate("A" * 60_000, {"A": inner}))
    (result,) = evaluate([out], SoftwareSpec(), nodes, [])
    assert result.status is OutputStatus.PENDING
    assert str(MAX_RESULT_CHARS) in (result.reason or "")


def test_files_from_disk_are_regular_and_bounded(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 101)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, why in [
        ("/dev/zero", "not a regular file"),
        (str(fifo), "not a regular file"),  # refused, not waited on
        (str(tmp_path), "directory"),
        (str(big), "larger than 100 bytes"),
    ]:
        with pytest.raises(InvalidDocument) as caught:
            read_bytes(path, limit=100)
        assert why in caught.value.problems[0].message
    assert read_bytes(big, limit=101) == b"x" * 101


# --- issue 39: budgets that follow values as they are passed on ---------------------------


def _read(template: dict[str, object], **extra: object) -> list[str]:
    body = {"stack_name": "s", "template": {"heat_template_version": "2018-08-31", **template}}
    result = read_body({**body, **extra}, default_inventory())
    return [f"{p.path} {p.message}" for p in result.problems]


def _doubling(n: int) -> dict[str, object]:
    resources: dict[str, object] = {"v0": {"type": "OS::Heat::Value", "properties": {"value": "x"}}}
    for i in range(1, n + 1):
        prev = {"get_attr": [f"v{i - 1}", "value"]}
        resources[f"v{i}"] = {"type": "OS::Heat::Value", "properties": {"value": [prev, prev]}}
    return {"resources": resources, "outputs": {"o": {"value": {"get_attr": [f"v{n}", "value"]}}}}


def test_a_shared_part_is_measured_once() -> None:
    value: object = "abc"
    for _ in range(200):  # 2**200 leaves once written out
        value = [value, value]
    size = Sizes().of(value)
    assert size.items == 2**201 - 1 and size.chars == 3 * 2**200 and size.depth == 200


def test_values_that_double_are_served_small_and_refused_at_the_budget() -> None:
    template = {"heat_template_version": "2018-08-31", **_doubling(10)}
    result = read_body({"stack_name": "s", "template": template}, default_inventory())
    assert not result.problems
    assert result.shape is not None
    assert json.dumps(result.shape.evaluated["o"]).count('"x"') == 1024
    said = "\n".join(_read(_doubling(30)))
    assert f"would make more than {MAX_VALUE_ITEMS} items" in said
    assert "/template/resources/v16/properties/value/1/get_attr" in said


def test_a_value_nests_at_most_a_hundred_levels() -> None:
    def wrapped(n: int) -> dict[str, object]:
        resources: dict[str, object] = {
            "v0": {"type": "OS::Heat::Value", "properties": {"value": "x"}}
        }
        for i in range(1, n):
            prev = {"get_attr": [f"v{i - 1}", "value"]}
            resources[f"v{i}"] = {"type": "OS::Heat::Value", "properties": {"value": [prev]}}
        return {"resources": dict(reversed(list(resources.items())))}

    assert not _read(wrapped(100))
    said = "\n".join(_read(wrapped(150)))
    assert f"nested {MAX_VALUE_DEPTH + 1} levels deep" in said


def test_a_chain_of_values_written_last_first_is_read_without_recursion() -> None:
    body = json.loads(hostile_cases._value_chain(999))
    result = read_body(body, default_inventory())
    assert not result.problems
    assert result.shape is not None and result.shape.evaluated["o"] == "x"


def test_circular_conditions_are_refused_as_heat_words_it() -> None:
    for conditions, used in [
        ({"a": {"not": "b"}, "b": {"not": "a"}}, "a"),
        ({"a": {"and": ["b", True]}, "b": {"or": ["a", False]}}, None),
    ]:
        body = json.loads(hostile_cases._conditions(conditions, used))
        said = [f"{p.path} {p.message}" for p in read_body(body, default_inventory()).problems]
        assert said == ['/template/conditions/a circular definition for condition "a"']


def test_files_are_bounded_in_count_and_size() -> None:
    def files(n: int, chars: int = 0) -> list[str]:
        given = {f"f{i}.yaml": "x" * chars for i in range(n)}
        return _read({"resources": {"web": hostile_cases.SERVER}}, files=given)

    assert not files(MAX_FILES)
    assert files(MAX_FILES + 1) == [f"/files {MAX_FILES + 1} files; a template brings at most 2000"]
    said = "\n".join(files(2, MAX_FILES_CHARS // 2))
    assert said.startswith("/files the files hold") and str(MAX_FILES_CHARS) in said


def test_outputs_followed_into_nested_templates_are_bounded() -> None:
    body = json.loads(hostile_cases._nested_output_fanout())
    said = [p.message for p in read_body(body, default_inventory()).problems]
    assert said == [
        f"the outputs take more than {MAX_OUTPUT_PARTS} parts from the outputs of nested "
        "templates, followed into them"
    ]

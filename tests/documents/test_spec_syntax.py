"""Reading text: syntax errors as one sentence with line and column; repeated keys kept."""

from __future__ import annotations

import pytest

from shoal.documents.syntax import parse
from shoal.documents.tree import Pairs
from shoal.model import InvalidDocument

SYNTAX: list[tuple[str, str | bytes, list[str]]] = [
    ("empty", "", ["the document is empty"]),
    ("blank", "  \n\n", ["the document is empty"]),
    (
        "missing-comma",
        '{"a": 1\n "b": 2}',
        ["line 2, column 2", "a comma is probably missing at the end of line 1"],
    ),
    ("bare-word", '{"a": x}', ["line 1, column 7", "a bare x is not JSON"]),
    ("trailing-comma", '{"a": [1,]}', ["expected a value", "a comma too many"]),
    ("trailing-comma-object", '{"a": 1,}\n', ["line 1, column 9", "remove the comma"]),
    ("missing-colon", '{"a" 1}', ["expected ':' after the key"]),
    ("extra-brace", '{"a": 1}}', ["the braces are not balanced"]),
    ("unclosed", '{"a": [1, 2', ["a '}' or ']' is missing"]),
    ("unclosed-string", '{"a": "b', ["never closed"]),
    ("yaml-unclosed", "a: [1, 2\n", ["line 2, column 1", "expected ',' or ']'"]),
    ("yaml-tab", "a:\n\tb: 1\n", ["line 2, column 1", "spaces, not tabs"]),
    ("yaml-two-documents", "a: 1\n---\nb: 2\n", ["line 2"]),
    ("yaml-python-tag", "a: !!python/object/apply:os.system [ls]\n", ["line 1"]),
    ("not-utf8", b"name: \xff\xfe", ["not UTF-8"]),
    ("control-character", "a: \x00", ["not allowed in text"]),
    ("deep-json", "[" * 100_000, ["nested too deeply"]),
    ("deep-yaml", "a: " + "[" * 100_000, ["nested too deeply"]),
    ("huge-number", "a: " + "9" * 5000, ["cannot be read"]),
]


@pytest.mark.parametrize(
    ("text", "phrases"), [pytest.param(t, p, id=case) for case, t, p in SYNTAX]
)
def test_syntax_errors(text: str | bytes, phrases: list[str]) -> None:
    with pytest.raises(InvalidDocument) as caught:
        parse(text)
    (problem,) = caught.value.problems
    assert problem.path == ""
    for phrase in phrases:
        assert phrase in problem.message


def test_source_names_the_file() -> None:
    with pytest.raises(InvalidDocument) as caught:
        parse("", source="shop.yaml")
    assert caught.value.problems[0].message == "shop.yaml: the document is empty"


def test_offending_line_is_quoted() -> None:
    with pytest.raises(InvalidDocument) as caught:
        parse('{\n  "size": x,\n  "b": 1\n}')
    assert caught.value.problems[0].message.endswith('line 2 reads: "size": x,')


def test_repeated_keys_are_kept_in_yaml_and_json() -> None:
    assert parse("a: 1\na: 2\n") == Pairs([("a", 1), ("a", 2)])
    assert parse('{"a": 1, "a": 2}') == Pairs([("a", 1), ("a", 2)])


def test_yaml_merge_keys_give_way_to_own_keys() -> None:
    tree = parse("base: &b {x: 1, y: 2}\nmine:\n  <<: *b\n  y: 3\n")
    assert isinstance(tree, Pairs)
    assert dict(tree)["mine"] == Pairs([("x", 1), ("y", 3)])


def test_yaml_flow_mapping_that_is_not_json_is_read_as_yaml() -> None:
    assert parse("{name: shop, count: 2}", source="c.yaml") == Pairs(
        [("name", "shop"), ("count", 2)]
    )


def test_non_breaking_space_indentation_is_plain_indentation() -> None:
    assert parse('{\n\u00a0 \u00a0"a": 1\n}') == Pairs([("a", 1)])
    assert parse("a:\n\u00a0 b: 1\n") == Pairs([("a", Pairs([("b", 1)]))])


def test_bom_is_ignored() -> None:
    assert parse(b"\xef\xbb\xbfa: 1\n") == Pairs([("a", 1)])

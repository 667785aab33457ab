"""YAML syntax errors are explained in the user's terms, as JSON ones are: what to change."""

from __future__ import annotations

import pytest

from shoal.documents.syntax import parse
from shoal.model.problems import InvalidDocument


@pytest.mark.parametrize(
    ("text", "line", "hint"),
    [
        ("name: x\nnode_groups:\n  - name: a\n     count: 2\n", 4, "indent this line like"),
        ("a:\n  b: 1\n c: 2\n", 3, "line up the keys of one mapping"),
        ("a:\n  - x\n  y: 1\n", 3, "line up the keys of one mapping"),
        ('a: "unclosed\n', 2, "never closed"),
        ("a: *nope\n", 1, "anchor `&name`"),
    ],
)
def test_a_yaml_error_says_what_to_change(text: str, line: int, hint: str) -> None:
    with pytest.raises(InvalidDocument) as bad:
        parse(text, "doc.yaml")
    [problem] = bad.value.problems
    assert problem.path == ""
    assert problem.message.startswith(f"doc.yaml: line {line}, ")
    assert hint in problem.message


def test_tabs_keep_their_own_hint() -> None:
    with pytest.raises(InvalidDocument) as bad:
        parse("a:\n\tb: 1\n")
    assert "spaces, not tabs" in bad.value.problems[0].message

"""The two forms of the Nova vcluster blueprint's example (seed 002), as written there."""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster, load_cluster_file
from shoal.documents.syntax import parse
from shoal.documents.tree import Pairs
from shoal.model import InvalidDocument, Inventory
from tests.documents.support import FIXTURES


def test_drafter_form_is_a_clear_syntax_error(inventory: Inventory) -> None:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster_file(FIXTURES / "vcluster-drafter.txt", inventory)
    (problem,) = caught.value.problems
    assert problem.path == ""
    assert "line 13, column 15" in problem.message
    assert "a comma is probably missing at the end of line 12" in problem.message
    assert 'line 13 reads: "instance": {' in problem.message


def test_drafter_bare_x_is_named(inventory: Inventory) -> None:
    """With the commas fixed, the next mistake is the bare x: named with line and column."""
    lines = (FIXTURES / "vcluster-drafter-case1.txt").read_text().split("\n")
    fixed = "\n".join(  # a comma after each "}" that is followed by another entry
        line + "," if line.strip() == "}" and '"' in lines[i + 1] else line
        for i, line in enumerate(lines[:-1])
    )
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(fixed, inventory)
    (problem,) = caught.value.problems
    assert problem.path == ""
    assert "expected a value, found 'x' — a bare x is not JSON" in problem.message
    assert '"size": x,' in problem.message
    row = next(i for i, line in enumerate(lines, 1) if '"size": x' in line)
    column = lines[row - 1].index("x,") + 1
    assert f"line {row}, column {column}:" in problem.message


def test_commenter_form_keeps_every_repeated_key() -> None:
    tree = parse((FIXTURES / "vcluster-commenter.json").read_text())
    assert isinstance(tree, Pairs)
    ((_, vcluster),) = tree
    assert isinstance(vcluster, Pairs)
    body = dict(vcluster)
    instances, groupings = body["instances"], body["groupings"]
    assert isinstance(instances, Pairs) and isinstance(groupings, Pairs)
    assert [k for k, _ in instances] == ["instance"] * 4
    assert [k for k, _ in groupings] == ["grouping"] * 4
    names = [dict(v)["name"] for _, v in instances if isinstance(v, Pairs)]
    assert names == ["db-server-1", "db-vol-1", "db-server-2", "db-vol-2"]


def test_commenter_form_problems_point_at_each_placeholder(inventory: Inventory) -> None:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster_file(FIXTURES / "vcluster-commenter.json", inventory)
    got = {(p.path, p.message.split(":")[0]) for p in caught.value.problems}
    assert got == {
        ("/vcluster/instances/0/spec/flavorRef", "unknown flavor '123-456-789'"),
        ("/vcluster/instances/0/spec/imageRef", "unknown image 'xxx-yyy-zzz'"),
        (
            "/vcluster/instances/1/spec/size",
            '"x" is a placeholder, not a size; give the volume size in GiB as a positive integer',
        ),
        ("/vcluster/instances/2/spec/flavorRef", "unknown flavor '123-456-789'"),
        ("/vcluster/instances/2/spec/imageRef", "unknown image 'xxx-yyy-zzz'"),
        (
            "/vcluster/instances/3/spec/size",
            '"x" is a placeholder, not a size; give the volume size in GiB as a positive integer',
        ),
    }


def test_commenter_form_with_real_values_loads_all_members(inventory: Inventory) -> None:
    text = (FIXTURES / "vcluster-commenter.json").read_text()
    text = text.replace('"x"', "10").replace("xxx-yyy-zzz", "cirros").replace("123-456-789", "1")
    spec = load_cluster(text, inventory)
    assert [i.name for i in spec.instances] == [
        "db-server-1",
        "db-vol-1",
        "db-server-2",
        "db-vol-2",
    ]
    assert [g.name for g in spec.groupings] == ["group-1", "group-2", "group-3", "group-4"]
    assert [str(g.rule) for g in spec.groupings] == ["affinity"] * 2 + ["anti-affinity"] * 2
    assert spec.node_groups == ()

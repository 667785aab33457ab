"""The `software` section of native documents: sources, checks, problems all at once, export."""

from __future__ import annotations

import itertools
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoal.documents import cluster_from_tree, load_cluster
from shoal.documents.export import to_document
from shoal.documents.software import MAX_DEPLOYMENTS
from shoal.model import InvalidDocument, Inventory, Problem
from shoal.model.catalogs import default_inventory
from shoal.model.graph import find_cycle
from shoal.model.members import MemberRef
from shoal.model.software import (
    DeployAction,
    HookGroup,
    IOType,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFactInput,
    OutputInput,
    OutputScope,
    SecretInput,
)
from shoal.planning.software import order

BASE = """
name: c
parameters:
  pw: {type: string, hidden: true, default: sekrit-value}
  port: {type: number, default: 80}
profiles:
  p: {type: server, flavor: m1.tiny, image: cirros}
  v: {type: volume, size: 1}
instances:
  - {name: db, profile: p}
node_groups:
  - {name: app, profile: p, count: 2}
  - name: store
    count: 1
    unit: {server: p, data: v}
"""


def doc(software: str, base: str = BASE) -> str:
    return base + "software:\n" + textwrap.indent(textwrap.dedent(software), "  ")


def problems(inventory: Inventory, text: str) -> list[Problem]:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(text, inventory)
    return caught.value.problems


GOOD = """
configs:
  db:
    group: script
    config: "#!/bin/sh\\necho db"
    inputs: [password]
    outputs: [{name: url}]
  app:
    group: script
    config: run
    inputs:
      - db_url
      - {name: port, type: Number}
      - {name: me, type: String}
      - {name: peers, type: CommaDelimitedList}
      - {name: urls, type: Json}
      - {name: extra, type: Json, default: {a: 1}}
      - {name: literal, type: Json}
    outputs: [endpoint]
deployments:
  database:
    config: db
    target: db
    inputs: {password: {secret: pw}}
    actions: [CREATE, UPDATE, DELETE]
  app:
    config: app
    target: app
    inputs:
      db_url: {output: database.url}
      port: {param: port}
      me: {node: address}
      peers: {members: app}
      urls: {output: database.url, from: all}
      literal: {value: {param: not-a-source}}
    depends_on: []
    quorum: 1
    retries: 2
    timeout: 30
  data:
    config: app
    target: store/data
    depends_on: [app]
"""


def test_every_source_is_read(inventory: Inventory) -> None:
    spec = load_cluster(doc(GOOD), inventory)
    sw = spec.software
    db = sw.config("db")
    assert db is not None and db.group is HookGroup.SCRIPT and db.inputs[0].name == "password"
    app = sw.config("app")
    assert app is not None and app.inputs[1].type is IOType.NUMBER
    d = sw.deployment("app")
    assert d is not None
    assert d.inputs == {
        "db_url": OutputInput("database", "url"),
        "port": LiteralInput(80),
        "me": NodeFactInput(NodeFact.ADDRESS),
        "peers": MemberFactsInput(MemberRef("app"), NodeFact.ADDRESS),
        "urls": OutputInput("database", "url", OutputScope.ALL),
        "literal": LiteralInput({"param": "not-a-source"}),
    }
    assert (d.quorum, d.retries, d.timeout_s) == (1, 2, 30.0)
    database = sw.deployment("database")
    assert database is not None and database.inputs == {"password": SecretInput("pw")}
    assert DeployAction.DELETE in database.actions
    assert sw.secrets == {"pw": "sekrit-value"}
    data = sw.deployment("data")
    assert data is not None and data.target == MemberRef("store", "data")


def test_export_round_trips(inventory: Inventory) -> None:
    spec = load_cluster(doc(GOOD), inventory)
    exported = to_document(spec)
    again = cluster_from_tree(exported, inventory)
    assert again.software == spec.software
    assert to_document(again) == exported
    assert exported["parameters"]["pw"]["hidden"] is True


def test_all_problems_at_once_with_pointers(inventory: Inventory) -> None:
    bad = """
    configs:
      c:
        group: script
        config: x
        inputs: [{name: n, type: Number}, {name: l, type: CommaDelimitedList}]
        outputs: [o]
      broken: {group: scrip, config: x}
    deployments:
      a:
        config: nope
        target: ghost
        depends_on: [b, zz]
      b:
        config: c
        target: app
        inputs:
          n: "not a number"
          typo: 1
          l: {node: zone}
          o: {output: a.missing}
        depends_on: [a]
      c:
        config: c
        target: store/disk
        inputs: {n: {members: app}}
      d:
        config: c
        target: app
        inputs: {n: {secret: port}, l: {output: b.o}}
        depends_on: [d]
    """
    found = {(p.path, p.message) for p in problems(inventory, doc(bad))}
    paths = {p for p, _ in found}
    assert "/software/configs/broken/group" in paths
    assert "/software/deployments/a/config" in paths
    assert "/software/deployments/a/target" in paths
    assert "/software/deployments/a/depends_on/1" in paths
    assert "/software/deployments/b/inputs/n" in paths
    assert "/software/deployments/b/inputs/typo" in paths
    assert "/software/deployments/b/inputs/l" in paths
    assert "/software/deployments/c/target" in paths
    assert "/software/deployments/c/inputs/n" in paths
    assert "/software/deployments/d/inputs/n/secret" in paths
    assert "/software/deployments/d/depends_on/0" in paths
    messages = " | ".join(m for _, m in found)
    assert "deployment dependency cycle: a → b → a" in messages
    assert "'d' depends on itself" in messages
    assert "declared Number but is given a String value" in messages
    assert "unknown input of config 'c' 'typo'" in messages


def test_an_output_reference_makes_a_cycle_too(inventory: Inventory) -> None:
    sw = """
    configs:
      c: {group: script, config: x, inputs: [i], outputs: [o]}
    deployments:
      x: {config: c, target: app, inputs: {i: {output: z.o}}}
      y: {config: c, target: app, depends_on: [x]}
      z: {config: c, target: app, depends_on: [y]}
    """
    [problem] = problems(inventory, doc(sw))
    assert problem.path == "/software/deployments/x/depends_on"
    assert "x → z → y → x" in problem.message


def test_counts_are_capped_before_work(inventory: Inventory) -> None:
    many = "\n".join(f"  d{i}: {{config: c, target: app}}" for i in range(MAX_DEPLOYMENTS + 1))
    sw = "configs:\n  c: {group: script, config: x}\ndeployments:\n" + many
    [problem] = problems(inventory, doc(sw))
    assert problem.path == "/software/deployments"
    assert f"at most {MAX_DEPLOYMENTS}" in problem.message


def test_a_document_without_software_has_an_empty_one(inventory: Inventory) -> None:
    spec = load_cluster(BASE, inventory)
    assert spec.software.deployments == ()
    assert "software" not in to_document(spec)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_graphs_load_iff_acyclic_and_a_cycle_is_named(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 7))
    edges = {
        i: data.draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True)) for i in range(n)
    }
    edges = {i: [j for j in deps if j != i] for i, deps in edges.items()}
    lines = [
        "configs:",
        "  c: {group: script, config: x, inputs: [i], outputs: [o]}",
        "deployments:",
    ]
    for i, deps in edges.items():
        via_output = deps[:1] if data.draw(st.booleans()) else []
        declared = [f"d{j}" for j in deps if j not in via_output]
        inputs = f", inputs: {{i: {{output: d{via_output[0]}.o}}}}" if via_output else ""
        lines.append(
            f"  d{i}: {{config: c, target: app, depends_on: [{', '.join(declared)}]{inputs}}}"
        )
    text = doc("\n".join(lines) + "\n")
    cyclic = find_cycle({f"d{i}": [f"d{j}" for j in deps] for i, deps in edges.items()})
    if cyclic is None:
        spec = load_cluster(text, default_inventory())
        assert len(order(spec.software)) == n
        return
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(text, default_inventory())
    named = [p for p in caught.value.problems if "cycle" in p.message]
    assert named and len(named) == len(caught.value.problems)
    for problem in named:  # disjoint loops are each named once
        loop = problem.message.split(": ", 1)[1].split(";")[0].split(" → ")
        assert loop[0] == loop[-1]
        for a, b in itertools.pairwise(loop):
            assert int(b[1:]) in edges[int(a[1:])]

"""The `outputs` section of native documents (documents/outputs.py) and their evaluation against a
cluster's nodes and deployment records (planning/outputs.py)."""

from __future__ import annotations

import json
import textwrap

import pytest

from shoal.documents import cluster_from_tree, load_cluster
from shoal.documents.export import to_document
from shoal.documents.outputs import MAX_OUTPUT_PARTS, MAX_OUTPUTS
from shoal.model import InvalidDocument, Problem
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import ClusterSpec
from shoal.model.members import MemberRef
from shoal.model.outputs import (
    JoinedText,
    ListValue,
    MapValue,
    MemberFact,
    OutputStatus,
    TextTemplate,
)
from shoal.model.software import (
    DeploymentRecord,
    DeploymentStatus,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFacts,
    OutputInput,
    OutputScope,
)
from shoal.planning.outputs import evaluate, replace_all

BASE = """
name: c
parameters:
  pw: {type: string, hidden: true, default: sekrit-value}
  port: {type: number, default: 5432}
conditions:
  never: false
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
software:
  configs:
    cfg: {group: script, config: echo, outputs: [{name: result}]}
  deployments:
    on_db: {config: cfg, target: db}
    on_app: {config: cfg, target: app}
"""


def doc(outputs: str) -> str:
    return BASE + "outputs:\n" + textwrap.indent(textwrap.dedent(outputs), "  ")


def load(outputs: str) -> ClusterSpec:
    spec = load_cluster(doc(outputs), default_inventory())
    stored = json.loads(json.dumps(to_document(spec)))
    assert cluster_from_tree(stored, default_inventory()).outputs == spec.outputs  # round-trips
    return spec


def problems(outputs: str) -> list[Problem]:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(doc(outputs), default_inventory())
    return caught.value.problems


def test_every_form_reads_and_round_trips() -> None:
    spec = load(
        """
        addresses: {description: app servers, value: {members: app, fact: address}}
        names: {value: {members: app, fact: name}}
        db: {value: {member: db}}
        disk_host: {value: {member: store/server, fact: host}}
        result: {value: {output: on_db.result}}
        results: {value: {output: on_app.result, from: all}}
        port: {value: {param: port}}
        escaped: {value: {value: {members: not-a-source}}}
        url:
          value:
            template: postgres://HOST:PORT/x
            params: {HOST: {member: db}, PORT: {param: port}}
        joined: {value: {join: [{members: app}, [x]], with: ","}}
        mixed: {value: {a: [1, {member: db, fact: zone}], b: text}}
        literal: {value: [1, {a: b}]}
        off: {value: 1, condition: never}
        """
    )
    by = {o.name: o for o in spec.outputs}
    app, db = MemberRef("app"), MemberRef("db")
    assert by["addresses"].value == MemberFactsInput(app, NodeFact.ADDRESS)
    assert by["addresses"].description == "app servers"
    assert by["names"].value == MemberFactsInput(app, NodeFact.NAME)
    assert by["db"].value == MemberFact(db, NodeFact.ADDRESS)
    assert by["disk_host"].value == MemberFact(MemberRef("store", "server"), NodeFact.HOST)
    assert by["result"].value == OutputInput("on_db", "result", OutputScope.NODE)
    assert by["results"].value == OutputInput("on_app", "result", OutputScope.ALL)
    assert by["port"].value == LiteralInput(5432)
    assert by["escaped"].value == LiteralInput({"members": "not-a-source"})
    assert by["url"].value == TextTemplate(
        "postgres://HOST:PORT/x",
        {"HOST": MemberFact(db, NodeFact.ADDRESS), "PORT": LiteralInput(5432)},
    )
    assert by["joined"].value == JoinedText(
        ",", (MemberFactsInput(app, NodeFact.ADDRESS), LiteralInput(["x"]))
    )
    assert by["mixed"].value == MapValue(
        {
            "a": ListValue((LiteralInput(1), MemberFact(db, NodeFact.ZONE))),
            "b": LiteralInput("text"),
        }
    )
    assert by["literal"].value == LiteralInput([1, {"a": "b"}])
    assert "off" not in by


def test_every_problem_at_once_with_pointers() -> None:
    found = problems(
        """
        a: {value: {members: nope}}
        b: {value: {member: db/part}}
        c: {value: {output: nope.result}}
        d: {value: {output: on_db.nope}}
        e: {value: {param: pw}}
        f: {value: {secret: pw}}
        g: {value: {node: address}}
        h: {value: {template: 3}}
        i: {value: {join: x}}
        j: {value: {member: db, fact: colour}}
        k: {value: {template: t, extra: 1}}
        l: {description: no value}
        m: {value: 1, extra: 2}
        "bad name": {value: 1}
        """
    )
    paths = [p.path for p in found]
    assert paths == [
        "/outputs/e/value/param",
        "/outputs/f/value/secret",
        "/outputs/g/value/node",
        "/outputs/h/value/template",
        "/outputs/i/value/join",
        "/outputs/j/value/fact",
        "/outputs/k/value/extra",
        "/outputs/l/value",
        "/outputs/m/extra",
        "/outputs/bad name",
        "/outputs/a/value/members",
        "/outputs/b/value/member",
        "/outputs/c/value/output",
        "/outputs/d/value/output",
    ]
    messages = {p.path: p.message for p in found}
    assert "hidden" in messages["/outputs/e/value/param"]
    assert "sekrit" not in " ".join(messages.values())
    assert "unknown node group or instance 'nope'" in messages["/outputs/a/value/members"]
    assert "unknown output of deployment 'on_db' 'nope'" in messages["/outputs/d/value/output"]


def test_limits_on_count_and_size() -> None:
    many = "".join(f"o{i}: {{value: {i}}}\n" for i in range(MAX_OUTPUTS + 1))
    assert [p.path for p in problems(many)] == ["/outputs"]
    big = "big: {value: [" + ", ".join(["{member: db}"] * (MAX_OUTPUT_PARTS + 5)) + "]}\n"
    (p,) = problems(big)
    assert p.path.startswith("/outputs/big/value/") and "at most" in p.message


def node(name: str, group: str, index: int | None, address: str | None, active: bool) -> NodeFacts:
    return NodeFacts(name, MemberRef(group), index, address, "az1", "h1", active)


def test_evaluation_follows_the_nodes_and_records_as_they_are() -> None:
    spec = load(
        """
        addresses: {value: {members: app}}
        db: {value: {template: "pg://H/x", params: {H: {member: db}}}}
        joined: {value: {join: [{members: app}, [{member: db}]], with: " "}}
        result: {value: {output: on_db.result}}
        results: {value: {output: on_app.result, from: all}}
        """
    )
    nodes = [
        node("app-10", "app", 10, "10.0.0.10", True),
        node("app-2", "app", 2, "10.0.0.2", True),
        node("db", "db", None, "10.0.0.9", True),
    ]
    records = [
        DeploymentRecord("on_db", "db", DeploymentStatus.COMPLETE, "d", {"result": "ok"}),
        DeploymentRecord("on_app", "app-2", DeploymentStatus.COMPLETE, "d", {"result": 2}),
        DeploymentRecord("on_app", "app-10", DeploymentStatus.IN_PROGRESS, "d"),
    ]
    got = {r.name: r for r in evaluate(spec.outputs, spec.software, nodes, records)}
    assert got["addresses"].value == ["10.0.0.2", "10.0.0.10"]  # name order, web-2 first
    assert got["db"].value == "pg://10.0.0.9/x"
    assert got["joined"].value == "10.0.0.2 10.0.0.10 10.0.0.9"
    assert got["result"].value == "ok"
    assert got["results"].status is OutputStatus.PENDING
    assert got["results"].value is None
    assert got["results"].reason == "deployment on_app is not complete on app-10 (IN_PROGRESS)"

    # a node on its way up makes what reads it pending, with why
    nodes[2] = node("db", "db", None, None, False)
    got = {r.name: r for r in evaluate(spec.outputs, spec.software, nodes, records)}
    assert got["db"].status is OutputStatus.PENDING
    assert got["db"].reason == "node db is not active yet"
    assert got["addresses"].status is OutputStatus.READY
    # and the instance gone (being replaced) too
    got = {r.name: r for r in evaluate(spec.outputs, spec.software, nodes[:2], records)}
    assert got["db"].reason == "db has no node yet"
    assert got["result"].reason == (
        "deployment on_db runs on 0 nodes, not one; take its output 'from: all'"
    )


def test_heat_str_replace_takes_longest_keys_first_and_never_rescans() -> None:
    assert replace_all("$a $ab", {"$a": "$ab", "$ab": "X"}) == "$ab X"
    assert replace_all("abc", {"": "x", "b": "B"}) == "aBc"

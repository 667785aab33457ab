"""The software resolver: order, digest, what is due on which node, and removals."""

from __future__ import annotations

import pytest

from shoal.model.members import MemberRef
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    DeployAction,
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    HookGroup,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFactInput,
    NodeFacts,
    OutputInput,
    OutputScope,
    ResolvedDeployment,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.planning.software import (
    DeploymentCycle,
    UnknownReference,
    digest,
    due,
    find_cycle,
    order,
    removals,
)

CREATE, UPDATE, DELETE = DeployAction.CREATE, DeployAction.UPDATE, DeployAction.DELETE
COMPLETE, FAILED = DeploymentStatus.COMPLETE, DeploymentStatus.FAILED


def cfg(name: str, *inputs: str, outputs: tuple[str, ...] = ()) -> SoftwareConfig:
    return SoftwareConfig(
        name,
        HookGroup.SCRIPT,
        f"#!/bin/sh\necho {name}\n",
        tuple(ConfigInput(i) for i in inputs),
        tuple(ConfigOutput(o) for o in outputs),
    )


def node(name: str, group: str, index: int | None = None, *, active: bool = True) -> NodeFacts:
    i = index if index is not None else int(name.rsplit("-", 1)[1]) if "-" in name else None
    n = i or 0
    return NodeFacts(name, MemberRef(group), i, f"127.0.0.{n + 1}", "az1", f"h{n}", active)


def controller() -> SoftwareSpec:
    """Seed 003's case: a database, an API service on every app node, a load balancer."""
    return SoftwareSpec(
        configs=(
            cfg("db", "password", outputs=("url",)),
            cfg("api", "db_url", "bind"),
            cfg("lb", "backends"),
        ),
        deployments=(
            Deployment(
                "lb-config",
                "lb",
                MemberRef("lb"),
                {"backends": MemberFactsInput(MemberRef("app"), NodeFact.ADDRESS)},
                depends_on=("api",),
            ),
            Deployment(
                "api",
                "api",
                MemberRef("app"),
                {
                    "db_url": OutputInput("database", "url"),
                    "bind": NodeFactInput(NodeFact.ADDRESS),
                },
                retries=1,
            ),
            Deployment(
                "database",
                "db",
                MemberRef("db"),
                {"password": SecretInput("db_password")},
                actions=frozenset({CREATE, UPDATE, DELETE}),
            ),
        ),
        secrets={"db_password": "s3cret"},
    )


NODES = [node("db", "db", 0), node("app-1", "app"), node("app-2", "app"), node("lb", "lb", 0)]


def complete(rd: ResolvedDeployment, **outputs: str) -> DeploymentRecord:
    return DeploymentRecord(rd.deployment, rd.node, COMPLETE, rd.digest, outputs, 1, rd.action)


def pairs(rds: tuple[ResolvedDeployment, ...]) -> list[tuple[str, str, DeployAction]]:
    return [(r.deployment, r.node, r.action) for r in rds]


def converge(
    spec: SoftwareSpec, nodes: list[NodeFacts], start: list[DeploymentRecord] | None = None
) -> list[DeploymentRecord]:
    """Run everything due until nothing is, each deployment completing with an output."""
    records = {(r.deployment, r.node): r for r in start or []}
    for _ in range(20):
        now = due(spec, nodes, list(records.values()))
        if not now:
            return list(records.values())
        for rd in now:
            records[(rd.deployment, rd.node)] = complete(rd, url=f"pg://{rd.node}")
    raise AssertionError("did not converge")


def test_order_follows_dependencies_and_keeps_document_order_for_ties() -> None:
    assert order(controller()) == ("database", "api", "lb-config")


def test_first_round_runs_only_what_has_no_dependencies() -> None:
    assert pairs(due(controller(), NODES, [])) == [("database", "db", CREATE)]


def test_dependents_run_once_every_dependency_node_completed() -> None:
    spec = controller()
    (db,) = due(spec, NODES, [])
    assert db.inputs == {"password": "s3cret"}
    assert db.secret_inputs == frozenset({"password"})
    second = due(spec, NODES, [complete(db, url="pg://db")])
    assert pairs(second) == [("api", "app-1", CREATE), ("api", "app-2", CREATE)]
    assert second[0].inputs == {"db_url": "pg://db", "bind": "127.0.0.2"}
    # one api node done is not enough for the load balancer
    third = due(spec, NODES, [complete(db, url="pg://db"), complete(second[0])])
    assert pairs(third) == [("api", "app-2", CREATE)]
    fourth = due(spec, NODES, [complete(db, url="pg://db"), *map(complete, second)])
    assert pairs(fourth) == [("lb-config", "lb", CREATE)]
    assert fourth[0].inputs == {"backends": ["127.0.0.2", "127.0.0.3"]}


def test_nothing_due_while_in_progress_or_pending_or_up_to_date() -> None:
    spec = controller()
    (db,) = due(spec, NODES, [])
    for status in (DeploymentStatus.IN_PROGRESS, DeploymentStatus.PENDING):
        record = DeploymentRecord("database", "db", status, db.digest)
        assert due(spec, NODES, [record]) == ()
    records = converge(spec, NODES)
    assert len(records) == 4
    assert due(spec, NODES, records) == ()


def test_a_replacement_node_gets_its_deployments_and_the_balancer_updates() -> None:
    spec = controller()
    records = converge(spec, NODES)
    # app-2 is replaced by app-3: its records go with it
    nodes = [n for n in NODES if n.name != "app-2"] + [node("app-3", "app")]
    left = [r for r in records if r.node != "app-2"]
    assert pairs(due(spec, nodes, left)) == [("api", "app-3", CREATE)]
    nodes_building = [n for n in NODES if n.name != "app-2"] + [node("app-3", "app", active=False)]
    assert due(spec, nodes_building, left) == ()
    seen: list[list[tuple[str, str, DeployAction]]] = []
    records = {(r.deployment, r.node): r for r in left}
    while now := due(spec, nodes, list(records.values())):
        seen.append(pairs(now))
        records.update({(rd.deployment, rd.node): complete(rd) for rd in now})
    assert seen == [[("api", "app-3", CREATE)], [("lb-config", "lb", UPDATE)]]
    assert records[("lb-config", "lb")].digest == digest(
        cfg("lb", "backends"), {"backends": ["127.0.0.2", "127.0.0.4"]}
    )


def test_a_config_change_updates_the_deployment_and_then_its_dependents() -> None:
    spec = controller()
    records = converge(spec, NODES)
    changed = SoftwareSpec(
        (
            cfg("db", "password", outputs=("url",)),
            cfg("api", "db_url", "bind", "extra"),
            cfg("lb", "backends"),
        ),
        spec.deployments,
        spec.secrets,
    )
    assert pairs(due(changed, NODES, records)) == [
        ("api", "app-1", UPDATE),
        ("api", "app-2", UPDATE),
    ]


def test_a_rotated_secret_changes_the_digest() -> None:
    spec = controller()
    records = converge(spec, NODES)
    rotated = SoftwareSpec(spec.configs, spec.deployments, {"db_password": "n3w"})
    assert pairs(due(rotated, NODES, records)) == [("database", "db", UPDATE)]


def test_failed_is_retried_while_attempts_allow_and_again_when_inputs_change() -> None:
    spec = controller()
    (db,) = due(spec, NODES, [])
    db_done = complete(db, url="pg://db")
    api = due(spec, NODES, [db_done])[0]
    failed = DeploymentRecord("api", "app-1", FAILED, api.digest, attempts=1, action=CREATE)
    assert ("api", "app-1", CREATE) in pairs(due(spec, NODES, [db_done, failed]))
    exhausted = DeploymentRecord("api", "app-1", FAILED, api.digest, attempts=2, action=CREATE)
    assert ("api", "app-1", CREATE) not in pairs(due(spec, NODES, [db_done, exhausted]))
    stale = DeploymentRecord("api", "app-1", FAILED, "old", attempts=5, action=UPDATE)
    assert ("api", "app-1", UPDATE) in pairs(due(spec, NODES, [db_done, stale]))


def test_quorum_lets_dependents_start_early() -> None:
    spec = controller()
    api = spec.deployment("api")
    assert api is not None
    quorum = SoftwareSpec(
        spec.configs,
        tuple(
            Deployment(d.name, d.config, d.target, d.inputs, d.depends_on, d.actions, 1)
            if d.name == "api"
            else d
            for d in spec.deployments
        ),
        spec.secrets,
    )
    (db,) = due(quorum, NODES, [])
    db_done = complete(db, url="pg://db")
    first, _ = due(quorum, NODES, [db_done])
    assert ("lb-config", "lb", CREATE) in pairs(due(quorum, NODES, [db_done, complete(first)]))


def test_outputs_per_node_and_gathered() -> None:
    spec = SoftwareSpec(
        (cfg("gen", outputs=("id",)), cfg("use", "mine", "everyone")),
        (
            Deployment("gen", "gen", MemberRef("w")),
            Deployment(
                "use",
                "use",
                MemberRef("w"),
                {
                    "mine": OutputInput("gen", "id"),
                    "everyone": OutputInput("gen", "id", OutputScope.ALL),
                },
            ),
        ),
    )
    nodes = [node("w-10", "w"), node("w-2", "w")]
    gens = due(spec, nodes, [])
    assert [g.node for g in gens] == ["w-2", "w-10"]  # natural order
    records = [complete(g, id=f"id-{g.node}") for g in gens]
    uses = due(spec, nodes, records)
    assert [u.inputs for u in uses] == [
        {"mine": "id-w-2", "everyone": ["id-w-2", "id-w-10"]},
        {"mine": "id-w-10", "everyone": ["id-w-2", "id-w-10"]},
    ]


def test_defaults_and_literals() -> None:
    config = SoftwareConfig(
        "c", HookGroup.SCRIPT, "x", (ConfigInput("a", default="d"), ConfigInput("b"))
    )
    spec = SoftwareSpec(
        (config,), (Deployment("d", "c", MemberRef("one"), {"b": LiteralInput([1, 2])}),)
    )
    (rd,) = due(spec, [node("one", "one", 0)], [])
    assert rd.inputs == {"a": "d", "b": [1, 2]}
    assert rd.digest == digest(config, {"a": "d", "b": [1, 2]})
    assert digest(config, {"a": "d", "b": [1, 2]}) != digest(config, {"a": "d", "b": [2, 1]})


def test_unit_parts_are_targeted_separately() -> None:
    spec = SoftwareSpec((cfg("c"),), (Deployment("d", "c", MemberRef("db", "data")),))
    nodes = [
        NodeFacts("db-1", MemberRef("db", "main"), 1, "a", None, None, True),
        NodeFacts("db-1-data", MemberRef("db", "data"), 1, "b", None, None, True),
    ]
    assert pairs(due(spec, nodes, [])) == [("d", "db-1-data", CREATE)]


def test_removals_run_delete_dependents_first() -> None:
    spec = SoftwareSpec(
        (cfg("c"),),
        (
            Deployment("base", "c", MemberRef("w"), actions=frozenset({CREATE, DELETE})),
            Deployment(
                "top",
                "c",
                MemberRef("w"),
                depends_on=("base",),
                actions=frozenset({CREATE, DELETE}),
            ),
            Deployment("plain", "c", MemberRef("w")),
        ),
    )
    nodes = [node("w-1", "w")]
    records = converge(spec, nodes)
    assert pairs(removals(spec, nodes, records)) == [
        ("top", "w-1", DELETE),
        ("base", "w-1", DELETE),
    ]
    done = [
        DeploymentRecord(r.deployment, r.node, COMPLETE, r.digest, action=DELETE) for r in records
    ]
    assert removals(spec, nodes, done) == ()
    assert removals(spec, nodes, []) == ()


def test_cycle_and_unknown_dependency_are_typed_errors() -> None:
    spec = SoftwareSpec(
        (cfg("c", "x"),),
        (
            Deployment("a", "c", MemberRef("w"), depends_on=("b",)),
            Deployment("b", "c", MemberRef("w"), {"x": OutputInput("a", "y")}),
        ),
    )
    with pytest.raises(DeploymentCycle) as err:
        order(spec)
    assert err.value.members == ("a", "b", "a")
    assert "a → b → a" in str(err.value)
    with pytest.raises(UnknownReference):
        order(SoftwareSpec((cfg("c"),), (Deployment("a", "c", MemberRef("w"), depends_on=("z",)),)))


def test_find_cycle_on_plain_graphs() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    assert find_cycle({"a": ["a"]}) == ("a", "a")
    assert find_cycle({"x": ["a"], "a": ["b"], "b": ["a"]}) == ("a", "b", "a")


def test_a_revision_moves_with_the_document_not_with_membership() -> None:
    from dataclasses import replace

    from shoal.model.software import (
        HookGroup,
        LiteralInput,
        MemberFactsInput,
        NodeFact,
        SecretInput,
        SoftwareConfig,
        SoftwareSpec,
    )
    from shoal.planning.software import plan, revision

    def spec(body: str, version: str, secret: str) -> SoftwareSpec:
        d = Deployment(
            "lb",
            "lb-config",
            MemberRef("lb"),
            inputs={
                "version": LiteralInput(version),
                "token": SecretInput("token"),
                "backends": MemberFactsInput(MemberRef("app"), NodeFact.ADDRESS),
            },
        )
        config = SoftwareConfig("lb-config", HookGroup.SCRIPT, body)
        return SoftwareSpec(configs=(config,), deployments=(d,), secrets={"token": secret})

    base = spec("echo", "1", "s")
    d = base.deployments[0]
    assert revision(base, d) == revision(spec("echo", "1", "s"), d)
    assert revision(base, d) != revision(spec("echo 2", "1", "s"), d)
    changed = spec("echo", "2", "s")
    assert revision(base, d) != revision(changed, changed.deployments[0])
    assert revision(base, d) != revision(spec("echo", "1", "t"), d)
    # Membership moves a node's digest, not the revision.
    lb = NodeFacts("lb-1", MemberRef("lb"), 1, "10.0.0.9", None, None, True)
    app = NodeFacts("app-1", MemberRef("app"), 1, "10.0.0.1", None, None, True)
    one = plan(base, [lb, app], []).wanted[("lb", "lb-1")]
    two = plan(base, [lb, app, replace(app, name="app-2", address="10.0.0.2")], []).wanted
    assert two[("lb", "lb-1")] != one

"""Property tests of the planner: applying a plan to what exists gives what is declared, and
its order respects dependencies (hypothesis)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS
from shoal.model.cluster import ClusterSpec, NodeGroup, UnitPart
from shoal.model.enums import NodeKind
from shoal.model.nodes import expand
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.planning import ObservedNode, StepKind, choose_replicas, make_plan

SERVER = ServerProfile(CLASSIC_FLAVORS[0], CIRROS)
VOLUME = VolumeProfile(10)


@st.composite
def clusters(draw: st.DrawFn) -> ClusterSpec:
    n = draw(st.integers(1, 4))
    groups = []
    for i in range(n):
        unit = draw(st.booleans())
        parts = (
            (UnitPart("server", SERVER), UnitPart("data", VOLUME))
            if unit
            else (UnitPart(None, SERVER),)
        )
        earlier = [f"g{j}" for j in range(i)]
        deps = (
            tuple(draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)))
            if earlier
            else ()
        )
        groups.append(NodeGroup(f"g{i}", parts, count=draw(st.integers(0, 5)), depends_on=deps))
    return ClusterSpec("c", node_groups=tuple(groups))


def _observed(spec: ClusterSpec) -> list[ObservedNode]:
    return [ObservedNode(n.name, n.kind, n.group, n.replica, "h1") for n in expand(spec)]


def _resized(spec: ClusterSpec, counts: list[int]) -> ClusterSpec:
    groups = tuple(
        dataclasses.replace(g, count=c) for g, c in zip(spec.node_groups, counts, strict=False)
    )
    return dataclasses.replace(spec, node_groups=groups)


def _order(steps: list) -> list[str]:  # type: ignore[type-arg]
    """A topological order of the steps (fails if dependencies form a cycle)."""
    done: list[str] = []
    pending = {s.id: set(s.depends_on) for s in steps}
    while pending:
        ready = [k for k, deps in pending.items() if deps <= set(done)]
        assert ready, f"dependency cycle among {sorted(pending)}"
        done.extend(sorted(ready))
        for k in ready:
            del pending[k]
    return done


@settings(max_examples=150, deadline=None)
@given(clusters(), st.data())
def test_a_plan_takes_what_exists_to_what_is_declared(
    before: ClusterSpec, data: st.DataObject
) -> None:
    after_counts = [data.draw(st.integers(0, 6)) for _ in before.node_groups]
    observed = _observed(before)
    desired = choose_replicas(_resized(before, after_counts), observed)
    want = {n.name for n in expand(desired)}
    hosts = dict.fromkeys(want, "h1")
    plan = make_plan(desired, hosts, dict.fromkeys(want, "az1"), observed)
    have = {o.name for o in observed}
    created = {s.node for s in plan.of(StepKind.CREATE)}
    deleted = {s.node for s in plan.of(StepKind.DELETE)}
    assert (have - deleted) | created == want
    assert not (created & have)
    assert deleted <= have
    # Existing replicas survive a scale-out; every group ends with its declared count.
    for g, count in zip(desired.node_groups, after_counts, strict=True):
        assert len(g.replica_indexes) == count
    # Every step is reachable in dependency order, and every dependency names a real step.
    ids = {s.id for s in plan.steps}
    assert all(set(s.depends_on) <= ids for s in plan.steps)
    order = _order(plan.steps)
    position = {sid: i for i, sid in enumerate(order)}
    # A group's creations come after the creations of what it depends on.
    for g in desired.node_groups:
        mine = [
            s for s in plan.of(StepKind.CREATE) if s.spec is not None and s.spec.group == g.name
        ]
        for dep in g.depends_on:
            theirs = [
                s for s in plan.of(StepKind.CREATE) if s.spec is not None and s.spec.group == dep
            ]
            for a in mine:
                for b in theirs:
                    assert position[a.id] > position[b.id]
    # A volume attaches after it and its server exist.
    for s in plan.of(StepKind.ATTACH):
        assert f"create:{s.node}" in s.depends_on


@settings(max_examples=100, deadline=None)
@given(clusters())
def test_deleting_everything_runs_in_reverse_dependency_order(spec: ClusterSpec) -> None:
    observed = _observed(spec)
    deps = {g.name: g.depends_on for g in spec.node_groups}
    attached = {
        n.name: n.name.rsplit("-", 1)[0] + "-server"
        for n in expand(spec)
        if n.kind is NodeKind.VOLUME
    }
    plan = make_plan(None, {}, {}, observed, attached, deps)
    assert {s.node for s in plan.of(StepKind.DELETE)} == {o.name for o in observed}
    position = {sid: i for i, sid in enumerate(_order(plan.steps))}
    by_group: dict[str, list[str]] = {}
    for o in observed:
        by_group.setdefault(o.group, []).append(f"delete:{o.name}")
    for g, ds in deps.items():
        for d in ds:
            for a in by_group.get(g, []):
                for b in by_group.get(d, []):
                    assert position[a] < position[b], f"{a} must go before {b}"
    for vol, server in attached.items():
        assert position[f"delete:{server}"] < position[f"delete:{vol}"]


def test_scale_in_removes_named_victims_first_then_the_newest() -> None:
    spec = ClusterSpec("c", node_groups=(NodeGroup("web", (UnitPart(None, SERVER),), count=5),))
    observed = _observed(spec)
    smaller = _resized(spec, [3])
    assert choose_replicas(smaller, observed).node_groups[0].replicas == (1, 2, 3)
    assert choose_replicas(smaller, observed, victims=["web-2"]).node_groups[0].replicas == (
        1,
        3,
        4,
    )

"""Property tests of the software resolver over random deployment graphs (hypothesis).

For random DAGs of deployments over a few node groups: `order` puts every deployment after all
it depends on; driving `due` to convergence, with the engine finishing a random part of what is
due each round (some runs failing once), never starts a deployment on a node before each of its
dependencies is complete on every target node, and ends with every deployment complete on every
active node. A graph with a loop makes `order` raise, naming a real loop.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoal.model.members import MemberRef
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    DeployAction,
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    HookGroup,
    InputSource,
    MemberFactsInput,
    NodeFact,
    NodeFacts,
    OutputInput,
    OutputScope,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.planning.software import DeploymentCycle, due, order, targets

GROUPS = ("a", "b", "c")
CONFIG = SoftwareConfig("c", HookGroup.SCRIPT, "true", (ConfigInput("x"),), (ConfigOutput("out"),))


@dataclass(frozen=True)
class Graph:
    spec: SoftwareSpec
    nodes: tuple[NodeFacts, ...]


@st.composite
def graphs(draw: st.DrawFn, *, cyclic: bool = False) -> Graph:
    n = draw(st.integers(1 if not cyclic else 2, 8))
    rank = draw(st.permutations(range(n)))  # a hidden topological order
    deployments: list[Deployment] = []
    edges: dict[int, set[int]] = {i: set() for i in range(n)}
    for i in range(n):
        edges[i] = {j for j in range(n) if rank[j] < rank[i] and draw(st.booleans())}
    if cyclic:
        low, high = sorted(
            draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)),
            key=lambda k: rank[k],
        )
        edges[low].add(high)  # a back edge: high already reaches low or will through this
        edges[high].add(low)
    for i in range(n):
        deps = sorted(edges[i])
        implicit = {d for d in deps if draw(st.booleans())}
        inputs: dict[str, InputSource] = {
            f"o{d}": OutputInput(f"d{d}", "out", draw(st.sampled_from(list(OutputScope))))
            for d in implicit
        }
        if draw(st.booleans()):
            inputs["x"] = MemberFactsInput(MemberRef(draw(st.sampled_from(GROUPS))), NodeFact.NAME)
        deployments.append(
            Deployment(
                f"d{i}",
                "c",
                MemberRef(draw(st.sampled_from(GROUPS))),
                inputs,
                depends_on=tuple(f"d{d}" for d in deps if d not in implicit),
                quorum=draw(st.sampled_from([None, None, 1])),
            )
        )
    nodes = tuple(
        NodeFacts(f"{g}-{k}", MemberRef(g), k, f"10.{k}", None, None, True)
        for g in GROUPS
        for k in range(1, draw(st.integers(0, 3)) + 1)
    )
    return Graph(SoftwareSpec((CONFIG,), tuple(deployments)), nodes)


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_order_respects_every_dependency(g: Graph) -> None:
    names = order(g.spec)
    assert sorted(names) == sorted(d.name for d in g.spec.deployments)
    at = {name: i for i, name in enumerate(names)}
    for d in g.spec.deployments:
        for dep in d.all_dependencies():
            assert at[dep] < at[d.name]


@settings(max_examples=150, deadline=None)
@given(graphs(), st.randoms(use_true_random=False))
def test_due_never_starts_before_dependencies_complete(g: Graph, rnd: random.Random) -> None:
    records: dict[tuple[str, str], DeploymentRecord] = {}
    failed_once: set[tuple[str, str]] = set()
    for _ in range(200):
        now = due(g.spec, g.nodes, list(records.values()))
        if not now:
            break
        for rd in now:
            d = g.spec.deployment(rd.deployment)
            assert d is not None
            for dep_name in d.all_dependencies():
                dep = g.spec.deployment(dep_name)
                assert dep is not None
                on = targets(dep.target, g.nodes)
                done = [
                    n
                    for n in on
                    if (r := records.get((dep_name, n.name))) is not None
                    and r.status is DeploymentStatus.COMPLETE
                ]
                need = len(on) if dep.quorum is None else min(dep.quorum, len(on))
                assert len(done) >= need, (rd, dep_name)
        # the engine gets through a random part of what is due; some runs fail once
        for rd in now:
            if rnd.random() < 0.4:
                continue
            key = (rd.deployment, rd.node)
            status = DeploymentStatus.COMPLETE
            if key not in failed_once and rnd.random() < 0.2:
                failed_once.add(key)
                status = DeploymentStatus.FAILED
            records[key] = DeploymentRecord(
                rd.deployment, rd.node, status, rd.digest, {"out": rd.node}, 1, rd.action
            )
    else:
        pytest.fail("did not converge")
    for d in g.spec.deployments:
        for n in targets(d.target, g.nodes):
            r = records.get((d.name, n.name))
            # retries=0: a failed run stays failed, and holds its dependents back
            assert r is not None or _blocked(g, d, records)


def _blocked(g: Graph, d: Deployment, records: dict[tuple[str, str], DeploymentRecord]) -> bool:
    failed = {k[0] for k, r in records.items() if r.status is DeploymentStatus.FAILED}
    seen: set[str] = set()
    stack = list(d.all_dependencies())
    while stack:
        name = stack.pop()
        if name in failed:
            return True
        if name not in seen:
            seen.add(name)
            dep = g.spec.deployment(name)
            assert dep is not None
            stack.extend(dep.all_dependencies())
    return False


@settings(max_examples=150, deadline=None)
@given(graphs(cyclic=True))
def test_a_cycle_is_detected_and_named(g: Graph) -> None:
    with pytest.raises(DeploymentCycle) as err:
        order(g.spec)
    loop = err.value.members
    assert len(loop) >= 3 and loop[0] == loop[-1]
    for a, b in itertools.pairwise(loop):
        d = g.spec.deployment(a)
        assert d is not None and b in d.all_dependencies()
    assert " → ".join(loop) in str(err.value)


def test_delete_only_deployments_hold_nobody_back() -> None:
    spec = SoftwareSpec(
        (CONFIG,),
        (
            Deployment("cleanup", "c", MemberRef("a"), actions=frozenset({DeployAction.DELETE})),
            Deployment("app", "c", MemberRef("a"), depends_on=("cleanup",)),
        ),
    )
    nodes = [NodeFacts("a-1", MemberRef("a"), 1, None, None, None, True)]
    assert [(r.deployment, r.action) for r in due(spec, nodes, [])] == [
        ("app", DeployAction.CREATE)
    ]

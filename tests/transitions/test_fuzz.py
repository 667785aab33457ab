"""Issue 36: change a running cluster as surely as you create one, as a model-based test on
`sim`, SQLite and PostgreSQL.

A hypothesis state machine keeps `CLUSTERS` clusters, each made from a random document; every
step applies a new document to each of them at once (a change a person would make, or a whole
new document: scale, groups added and removed, deployments switched between hook groups,
workloads added, removed, scaled and re-imaged, balancers moved over groups and workloads) and
compares what each cluster comes to with a fresh create of the same document (observed, never
planned: tests/transitions/model.py), then looks for orphans over the whole rig. One engine
serves every example (its loop on a thread), so a step costs the engine's work, not a start.

The sizes below give 2 x 1,000 transitions (CLUSTERS x steps x examples per database).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.transitions.model import (
    POOL,
    Oracle,
    Rig,
    Shape,
    Tally,
    mutate,
    step,
    wait_for,
)

from shoal.store.database import Database

CLUSTERS = 10
STEPS = 10
EXAMPLES = 10
"""CLUSTERS x STEPS x EXAMPLES transitions per database (the initial creates not counted)."""
SEEDS = st.integers(0, 2**32 - 1)
"""Each step draws one seed, its documents drawn from it: what hypothesis draws never depends
on what the engine did (a refused change leaves a cluster where it was)."""


@pytest.fixture
def rig(db: Database) -> Iterator[Rig]:
    made = Rig(db)
    try:
        yield made
    finally:
        made.close()


def test_every_transition_ends_as_a_fresh_create_of_its_document(rig: Rig) -> None:
    oracle = Oracle(rig)
    tally = Tally()
    serial = iter(range(1_000_000))

    class Transitions(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.clusters: dict[str, Shape] = {}

        @initialize(seed=SEEDS)
        def create(self, seed: int) -> None:
            rng = random.Random(seed)
            first = {f"t{next(serial)}": rng.choice(POOL) for _ in range(CLUSTERS)}
            made = {name: s for name, s in first.items() if rig.create(name, s) is not None}
            oracle.of(list(made.values()))
            for name, s in made.items():
                want = oracle.known.get(s)
                cid = rig.cluster_id(name)
                assert want is not None, f"{s} was refused as a change, taken as a create"
                got = wait_for(lambda cid=cid, want=want: rig.observe(cid) == want)
                assert got, f"{name} created from {s} never came to {want}: {rig.observe(cid)}"
                self.clusters[name] = s

        @rule(seed=SEEDS)
        def change(self, seed: int) -> None:
            rng = random.Random(seed)
            shapes = {name: mutate(rng, s) for name, s in self.clusters.items()}
            problems = step(rig, oracle, self.clusters, shapes, tally)
            assert not problems, "\n".join(problems)

        @invariant()
        def nothing_diverged(self) -> None:
            assert tally.divergences == 0 and tally.orphans == 0, "\n".join(tally.notes)

        def teardown(self) -> None:
            for name in self.clusters:
                rig.delete(name)
            assert wait_for(lambda: all(rig.cluster_id(n) is None for n in self.clusters))

    Transitions.TestCase.settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        derandomize=True,
        # No shrinking: the engine and its clusters outlive an example; a failure says all.
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    Transitions.TestCase().runTest()
    print(f"transitions: {tally.steps} steps, {tally.divergences} divergences")
    assert tally.divergences == 0 and tally.orphans == 0, "\n".join(tally.notes)
    assert tally.steps >= CLUSTERS * EXAMPLES, tally

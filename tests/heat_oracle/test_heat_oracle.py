"""Differential test: every template Shoal reads, read by Heat 27 too; they must agree.

Heat's template engine runs in-process in its own venv (tests/heat_oracle/heat_side.py, one
subprocess for all cases); Shoal reads the same files. They must agree on accepted or refused,
the properties Shoal maps, which resources exist after conditions, and the outputs that need no
run time; a disagreement fails unless docs/hot.md's table of deliberate differences lists it
with its reason. A row that no longer matches anything fails too, so the table stays true.
"""

from __future__ import annotations

import json

import pytest

from tests.heat_oracle.compare import deliberate
from tests.heat_oracle.run import CORPORA, DOC, Run, own_cases, run


@pytest.fixture(scope="module")
def result() -> Run:
    return run(CORPORA)


def test_enough_own_cases() -> None:
    assert len(own_cases()) >= 150


def test_heat_and_shoal_agree(result: Run) -> None:
    print(json.dumps(result.line()))
    assert result.cases >= 150
    assert not result.undocumented, "\n".join(
        f"{k}: {v}" for k, v in sorted(result.undocumented.items())
    )


def test_every_documented_difference_still_happens(result: Run) -> None:
    keys = list(result.documented)
    stale = [r for r in deliberate(DOC) if not any(r.covers(k) for k in keys)]
    assert not stale, [f"{r.case}: {r.aspect}" for r in stale]

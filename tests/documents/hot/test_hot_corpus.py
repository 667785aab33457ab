"""Real Heat templates keep reading and planning: no template that did so before may regress.

The heat-templates corpus is committed (tests/data/hot/heat-templates, Apache-2.0); magnum
20.0.0's wheel and tripleo-heat-templates 18.0.0's sdist are downloaded with pip into
~/.cache/shoal-tests when missing (about 10 s of CPU for tripleo's 295 templates).
"""

from __future__ import annotations

from pathlib import Path

from tests.documents.hot.corpus import DATA, HEAT_TEMPLATES, fetch, run_corpus


def expected(corpus: str) -> dict[str, str]:
    lines = (DATA / f"expected-{corpus}.txt").read_text().splitlines()
    return {
        path: state for state, path in (ln.split(" ", 1) for ln in lines if not ln.startswith("#"))
    }


def check(corpus: str, root: Path) -> None:
    summary = run_corpus(corpus, root)
    now = {o.path: o for o in summary.outcomes}
    lost = []
    for path, state in expected(corpus).items():
        o = now.get(path)
        if o is None or not o.parsed or (state == "planned" and not o.planned):
            lost.append(f"{path}: was {state}, now {o.reason if o else 'missing'}")
    assert not lost, "\n".join(lost)
    # every template not planned has a counted reason
    assert all(o.reason for o in summary.outcomes if not o.planned)


def test_heat_templates_corpus_keeps_planning() -> None:
    check("heat-templates", HEAT_TEMPLATES)


def test_magnum_driver_templates_keep_planning() -> None:
    check("magnum", fetch("magnum"))


def test_tripleo_heat_templates_keep_planning() -> None:
    check("tripleo", fetch("tripleo"))

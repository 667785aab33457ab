"""The differential run: every case through Heat 27 (one subprocess) and through Shoal.

`python -m tests.heat_oracle.run [--corpus own,heat-templates,magnum,tripleo]` prints one JSON
line of figures and each disagreement not in docs/hot.md's table (the test asserts there are
none). Cases: the project's own small templates (tests/heat_oracle/cases, one idea each; an
environment beside one is `NAME.env.yaml`, then `NAME.env2.yaml`), and the corpora the HOT
benchmark reads, each template alone with a made-up value for each parameter without a default
(tests/documents/hot/corpus.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.documents.hot.corpus import HEAT_TEMPLATES, _parameters, fetch, template_files
from tests.heat_oracle.compare import Case, deliberate, differences, shoal_reading
from tests.heat_oracle.venv import heat_venv

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
DOC = HERE.parents[1] / "docs" / "hot.md"
CORPORA = ("own", "heat-templates", "magnum", "tripleo")


def own_cases() -> list[Case]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        if ".env" in path.name:
            continue
        envs = tuple(
            e
            for e in (CASES / f"{path.stem}.env.yaml", CASES / f"{path.stem}.env2.yaml")
            if e.exists()
        )
        out.append(Case(path.stem, path, envs))
    return out


def corpus_cases(corpus: str) -> list[Case]:
    root = HEAT_TEMPLATES if corpus == "heat-templates" else fetch(corpus)
    return [
        Case(f"{corpus}/{p.relative_to(root)}", p, (), _parameters(p))
        for p in template_files(root)
        if ".j2." not in p.name
    ]


def heat_readings(cases: list[Case]) -> dict[str, dict[str, object]]:
    """Heat's reading of every case, in one subprocess of the Heat venv."""
    python = heat_venv() / "bin" / "python"
    done = subprocess.run(
        [str(python), str(HERE / "heat_side.py")],
        input=json.dumps([c.heat_json() for c in cases]),
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Heat's side failed:\n{done.stderr[-4000:]}")
    answers: dict[str, dict[str, object]] = json.loads(done.stdout)
    return answers


@dataclass(slots=True)
class Run:
    cases: int = 0
    agreements: int = 0
    documented: dict[str, str] = field(default_factory=dict)
    undocumented: dict[str, str] = field(default_factory=dict)
    heat_seconds: float = 0.0
    shoal_seconds: float = 0.0
    by_corpus: dict[str, int] = field(default_factory=dict)

    def line(self) -> dict[str, object]:
        return {
            "templates_compared": self.cases,
            "by_corpus": self.by_corpus,
            "agreements": self.agreements,
            "documented_differences": len(self.documented),
            "undocumented_differences": len(self.undocumented),
            "heat_seconds": round(self.heat_seconds, 2),
            "shoal_seconds": round(self.shoal_seconds, 2),
        }


def run(corpora: tuple[str, ...] = CORPORA) -> Run:
    cases: list[Case] = []
    result = Run()
    for corpus in corpora:
        found = own_cases() if corpus == "own" else corpus_cases(corpus)
        result.by_corpus[corpus] = len(found)
        cases += found
    start = time.perf_counter()
    heat = heat_readings(cases)
    result.heat_seconds = time.perf_counter() - start
    rows = deliberate(DOC)
    start = time.perf_counter()
    for case in cases:
        shoal = shoal_reading(case)
        diffs = differences(case.id, heat[case.id], shoal)
        result.cases += 1
        if not diffs:
            result.agreements += 1
        for key, what in diffs.items():
            row = next((r for r in rows if r.covers(key)), None)
            if row is None:
                result.undocumented[key] = what
            else:
                result.documented[key] = row.reason
    result.shoal_seconds = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=",".join(CORPORA))
    parser.add_argument("--show", action="store_true", help="print documented ones too")
    args = parser.parse_args()
    result = run(tuple(args.corpus.split(",")))
    print(json.dumps(result.line()))
    for key, what in sorted(result.undocumented.items()):
        print(f"UNDOCUMENTED {key}: {what}")
    if args.show:
        for key, why in sorted(result.documented.items()):
            print(f"documented {key}: {why}")
    sys.exit(1 if result.undocumented else 0)


if __name__ == "__main__":
    main()

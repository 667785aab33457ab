"""Real Heat templates through Shoal's HOT reader and placement: how many parse, how many plan.

Corpora: OpenStack's heat-templates `hot/` (committed under tests/data/hot/heat-templates),
the driver templates in magnum 20.0.0's wheel, and tripleo-heat-templates 18.0.0's sdist (both
downloaded with pip into ~/.cache/shoal-tests on first use). Each template is read alone with a
made-up value for each parameter without a default, on a synthetic inventory that has the
flavors, images and zones it names (tests/documents/hot/corpus.py). Every template not planned is
counted once, by its first reason.

Run: `python benchmarks/hot_corpus.py [--corpus heat-templates,magnum,tripleo]
[--software ignore]`. Prints one JSON line per corpus (`corpus, templates, parsed, planned,
planned_with_nodes, planned_with_deployments, outputs_served, outputs_not_served, seconds,
unsupported`) and one for all of them together (`corpus: "all"`). `planned_with_deployments`
counts planned templates whose Heat software deployments were mapped onto Shoal's software
model; `outputs_served` the outputs of planned templates served from their clusters, and
`outputs_not_served` the others by reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.documents.hot.corpus import HEAT_TEMPLATES, fetch, run_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="heat-templates,magnum,tripleo")
    parser.add_argument(
        "--software",
        default="refuse",
        choices=("refuse", "ignore"),
        help="ignore: count templates that would plan if software deployments were left out",
    )
    args = parser.parse_args()
    total: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    not_served: Counter[str] = Counter()
    seconds = 0.0
    for corpus in args.corpus.split(","):
        root = HEAT_TEMPLATES if corpus == "heat-templates" else fetch(corpus)
        line = run_corpus(corpus, root, args.software).line()
        print(json.dumps(line), flush=True)
        for key in (
            "templates",
            "parsed",
            "planned",
            "planned_with_nodes",
            "planned_with_deployments",
            "outputs_served",
        ):
            total[key] += int(line[key])  # type: ignore[call-overload]
        seconds += float(line["seconds"])  # type: ignore[arg-type]
        reasons.update(line["unsupported"])  # type: ignore[arg-type]
        not_served.update(line["outputs_not_served"])  # type: ignore[arg-type]
    print(
        json.dumps(
            {
                "corpus": "all",
                **total,
                "seconds": round(seconds, 2),
                "unsupported": dict(reasons.most_common()),
                "outputs_not_served": dict(not_served.most_common()),
            }
        )
    )


if __name__ == "__main__":
    main()

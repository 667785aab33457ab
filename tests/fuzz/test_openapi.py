"""API fuzzing: schemathesis against the OpenAPI a real `shoal server` serves, on both stores.

The schemathesis CLI runs all its phases (coverage, fuzzing, stateful) on every operation of
the served document, with requests valid and invalid by the schema; each answer must be no
server error, have a status the document declares, the declared content type, and a body that
validates against the declared schema. The run is bounded (`SHOAL_FUZZ_EXAMPLES` per operation
and phase, a fixed seed) so CI stays inside its time; raise the examples or change
`SHOAL_FUZZ_SEED` for a deeper or different run. The figures (requests, answers by class,
failures) are printed as JSON lines at the end of the pytest run.

Each served document in SCHEMAS is fuzzed: the native API's and the Senlin façade's
(`/clustering/openapi.json`, whose routes declare Senlin's error body).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.fuzz.conftest import TALLY, Served
from tests.support.server import REPO

pytestmark = pytest.mark.fuzz

SCHEMAS: dict[str, str] = {
    "native": "/openapi.json",
    "senlin": "/clustering/openapi.json",
}
"""Each served OpenAPI document to fuzz: a name, and its path on the server."""

EXCLUDED_PATHS = ["/v1/events/stream"]
"""Streams never end by design: they are tested in tests/api, not fuzzed."""

EXAMPLES = os.environ.get("SHOAL_FUZZ_EXAMPLES", "10")
SEED = os.environ.get("SHOAL_FUZZ_SEED", "1")
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)
RUN_TIMEOUT_S = 900


def schemathesis_run(served: Served, path: str, reports: Path) -> subprocess.CompletedProcess[str]:
    server = served.server
    argv = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        f"{server.url}{path}",
        "--checks",
        CHECKS,
        "--max-examples",
        EXAMPLES,
        "--seed",
        SEED,
        "--workers",
        "1",
        "--header",
        f"Authorization: Bearer {server.token}",
        "--request-timeout",
        "30",
        "--report",
        "ndjson",
        "--report-dir",
        str(reports),
        "--no-color",
    ]
    for excluded in EXCLUDED_PATHS:
        argv += ["--exclude-path", excluded]
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.fuzz.hooks",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        argv,
        env=env,
        cwd=reports,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def answers(reports: Path) -> Counter[str]:
    """Requests made and answers by status class, from the run's NDJSON events."""
    counts: Counter[str] = Counter()
    for report in reports.glob("*.ndjson"):
        for line in report.read_text().splitlines():
            for status in _statuses(json.loads(line)):
                counts["requests"] += 1
                counts[f"{status // 100}xx"] += 1
    return counts


def _statuses(event: object) -> list[int]:
    """Every `status_code` of a response recorded anywhere in one event."""
    found: list[int] = []
    stack = [event]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            response = item.get("response")
            if isinstance(response, dict) and isinstance(response.get("status_code"), int):
                found.append(response["status_code"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_api_answers_as_its_openapi_says(name: str, served: Served, tmp_path: Path) -> None:
    done = schemathesis_run(served, SCHEMAS[name], tmp_path)
    counts = answers(tmp_path)
    counts["failures"] = 0 if done.returncode == 0 else 1
    TALLY.counts[f"{name}@{served.backend}"] = counts
    assert done.returncode == 0, f"{done.stdout[-20000:]}\n{done.stderr[-5000:]}"
    assert counts["requests"] > 0, "the run made no request"
    assert counts["5xx"] == 0

"""`shoal workloads CLUSTER` against a background Shoal on the sim provider (issue 22): after
`shoal up`, the engine starts every replica and the command lists each with its node and
`ready`; `--max` caps what is read and says so; an image change by `shoal apply` rolls the replicas
(each lists its revision, the rollout its phase) and a rollout line shows in the table; `shoal
scale --workload` sets the replica count (one command per check: each starts Python)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.cli.support import Shoal

DOC = """\
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 3
workloads:
  api:
    replicas: 3
    containers: [{name: api, image: img, ports: [8080], resources: {cpu: 0.5}}]
    rules: [{rule: anti-affinity, scope: node}]
"""


def test_workloads_lists_replicas_with_node_and_ready(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "svc.yaml"
    doc.write_text(DOC)
    shoal.ok("up", str(doc))
    deadline = time.monotonic() + 90
    while True:
        found: list[dict[str, Any]] = shoal.json("workloads", "svc")["replicas"]
        if len(found) == 3 and all(r["ready"] for r in found):
            break
        assert time.monotonic() < deadline, found
        time.sleep(0.3)
    assert [r["replica"] for r in found] == ["api-1", "api-2", "api-3"]
    assert sorted(r["node"] for r in found) == ["ctl-1", "ctl-2", "ctl-3"]  # one per node
    capped = shoal.json("workloads", "svc", "--max", "2")
    assert len(capped["replicas"]) == 2 and capped["truncated"] is True
    first = shoal.json("workloads", "svc")["rollouts"]
    assert [(r["workload"], r["phase"], r["images"]) for r in first] == [
        ("api", "COMPLETE", ["img"])
    ]

    doc.write_text(DOC.replace("image: img", "image: img2"))
    shoal.ok("apply", str(doc))
    while True:
        seen = shoal.json("workloads", "svc")
        roll = seen["rollouts"][0]
        if roll["phase"] == "COMPLETE" and roll["images"] == ["img2"]:
            break
        assert time.monotonic() < deadline + 90, seen
        time.sleep(0.3)
    assert roll["previous_revision"] == first[0]["revision"] and roll["batches"] == 3
    assert {r["revision"] for r in seen["replicas"]} == {roll["revision"]}
    assert all(r["ready"] for r in seen["replicas"])
    table = shoal.ok("workloads", "svc").stdout
    assert "REVISION" in table and roll["revision"][:8] in table

    # `shoal scale --workload`: the exact count, refused beyond the bounds (exit 2).
    shoal.ok("scale", "svc", "--workload", "api", "--count", "2")
    while len(shoal.json("workloads", "svc")["replicas"]) != 2:
        assert time.monotonic() < deadline + 180
        time.sleep(0.3)
    refused = shoal("scale", "svc", "--workload", "api", "--count", "20000")
    assert refused.returncode == 2 and "replicas" in refused.stderr, refused.stderr

"""`shoal workloads CLUSTER` against a background Shoal on the sim provider (issue 22): after
`shoal up`, the engine starts every replica and the command lists each with its node and
`ready`; `--max` caps what is read and says so (one command per check: each starts Python)."""

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

"""`shoal deployments CLUSTER` and `shoal logs NODE --deployment NAME` against a background
Shoal on the sim provider (deployments simulated; failing ones with `deploy_failure_rate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.support import Shoal, explain
from tests.support.polling import eventually

DOC = """\
name: shop
node_groups:
  - name: app
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
software:
  configs:
    setup:
      group: script
      config: |
        #!/bin/sh
        echo ready
  deployments:
    setup:
      config: setup
      target: app
"""


def until_complete(shoal: Shoal, count: int) -> list[dict[str, Any]]:
    def complete() -> list[dict[str, Any]] | None:
        found: list[dict[str, Any]] = shoal.json("deployments", "shop", "-o", "json")["deployments"]
        done = len(found) == count and all(d["status"] == "COMPLETE" for d in found)
        return found if done else None

    found: list[dict[str, Any]] = eventually(complete, f"{count} deployments COMPLETE", every_s=0.2)
    return found


def test_deployments_and_their_logs(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "shop.yaml"
    doc.write_text(DOC)
    shoal.ok("up", str(doc))
    found = until_complete(shoal, 2)
    assert sorted(d["node"] for d in found) == ["app-1", "app-2"]
    assert {d["status_code"] for d in found} == {0}

    table = shoal.ok("deployments", "shop").stdout
    assert "setup" in table and "app-1" in table and "COMPLETE" in table

    done = shoal("logs", "app-1", "--deployment", "setup")
    assert done.returncode == 0, explain(done)
    assert "CREATE setup on app-1" in done.stdout

    missing = shoal("logs", "app-1", "--deployment", "nope")
    assert missing.returncode == 2, explain(missing)
    assert "has not run" in missing.stderr
    gone = shoal("deployments", "nope")
    assert gone.returncode == 2 and "no cluster" in gone.stderr, explain(gone)

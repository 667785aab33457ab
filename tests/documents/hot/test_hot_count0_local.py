"""TripleO's style with a role switched off, on the local provider, converted in place.

`overcloud.yaml -e single.yaml`: one controller, the Compute role at count 0 with a flavor the
cloud does not have (not checked, as Heat does not check a group of none), deployments at the
top level fed each role's servers through the role's output. `apply -e ha.yaml --dry-run`
shows the conversion's plan without changing anything; `apply -e ha.yaml` converts the running
cluster to three controllers and a compute; `apply -e single.yaml` converts it back. Real
processes on loopback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.conftest import home, local_shoal
from tests.cli.support import Shoal

__all__ = ["home", "local_shoal"]

DATA = Path(__file__).resolve().parents[2] / "data" / "hot" / "tripleo-count0"
TEMPLATE = str(DATA / "overcloud.yaml")


def servers(shoal: Shoal) -> list[str]:
    nodes: list[dict[str, Any]] = shoal.json("describe", "cluster", "overcloud")["nodes"]
    return sorted(n["name"] for n in nodes if n["kind"] == "server")


def test_count0_role_plans_comes_up_and_converts(local_shoal: Shoal) -> None:
    planned = local_shoal.ok("plan", TEMPLATE, "-e", str(DATA / "single.yaml"))
    assert "Controller-1" in planned.stdout and "Compute" not in planned.stdout.split("deploy")[0]

    done = local_shoal.ok("up", TEMPLATE, "-e", str(DATA / "single.yaml"))
    assert "cluster overcloud: ACTIVE" in done.stdout
    assert servers(local_shoal) == ["Controller-1"]

    preview = local_shoal.ok("apply", TEMPLATE, "-e", str(DATA / "ha.yaml"), "--dry-run")
    assert "no cluster" not in preview.stdout + preview.stderr
    assert "Compute" in preview.stdout and "Controller" in preview.stdout
    assert servers(local_shoal) == ["Controller-1"]  # a dry run changes nothing

    local_shoal.ok("apply", TEMPLATE, "-e", str(DATA / "ha.yaml"))
    assert servers(local_shoal) == ["Compute-1", "Controller-1", "Controller-2", "Controller-3"]

    local_shoal.ok("apply", TEMPLATE, "-e", str(DATA / "single.yaml"))
    assert servers(local_shoal) == ["Controller-1"]
    local_shoal.ok("delete", "overcloud", "--wait")

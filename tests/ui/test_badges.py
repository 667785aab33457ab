"""Every status the dashboard can be handed has a badge (issue 36: a finished rollout was drawn
as a busy `? COMPLETE`, and every DEPLOY, DEPLOYING, SIGNALLED and DEPLOY_COMPLETE event with a
`?`).

The statuses are read where they are made, so a new one without a badge fails here: every value
of the model's status enums (clusters, nodes, actions, health, deployments, software rollouts'
phases, workload rollouts' phases), and every status text the source passes to an event (found
in the source's syntax, not listed by hand). The badges are read from the dashboard's own
`core.js`, and each colour class from its stylesheet.
"""

from __future__ import annotations

import ast
import re
from enum import StrEnum
from importlib import resources
from pathlib import Path

from shoal.model.enums import ActionStatus, ClusterStatus, Health, NodeStatus
from shoal.model.rollouts import RolloutPhase
from shoal.model.software import DeploymentStatus
from shoal.model.workload_rollouts import WorkloadPhase

SRC = Path(__file__).resolve().parents[2] / "src" / "shoal"
STATUS_ENUMS: tuple[type[StrEnum], ...] = (
    ClusterStatus,
    NodeStatus,
    ActionStatus,
    Health,
    DeploymentStatus,
    RolloutPhase,
    WorkloadPhase,
)
# The functions that make an event, and where their status goes when given by position.
EVENT_MAKERS = {
    "cluster_event": 1,
    "node_record_event": 1,
    "child_node_event": 1,
    "new_event": 3,
    "node_event": None,
    "NewEvent": None,
}
ENTRY = re.compile(r'([A-Z_]+): \["([a-z]+)", "(.)"\]')


def static(name: str) -> str:
    return resources.files("shoal.api.ui").joinpath("static", name).read_text()


def badges() -> dict[str, tuple[str, str]]:
    core = static("core.js")
    table = core[core.index("const STATUS = {") : core.index("};", core.index("const STATUS"))]
    return {m[1]: (m[2], m[3]) for m in ENTRY.finditer(table)}


def event_statuses() -> dict[str, str]:
    """Every text the source passes as an event's status -> where (file:line)."""
    found: dict[str, str] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in EVENT_MAKERS:
                continue
            arg = next((k.value for k in node.keywords if k.arg == "status"), None)
            at = EVENT_MAKERS[name]
            if arg is None and at is not None and len(node.args) > at:
                arg = node.args[at]
            for c in ast.walk(arg) if arg is not None else ():
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    found.setdefault(c.value, f"{path.relative_to(SRC)}:{node.lineno}")
    return found


def test_every_status_of_the_model_has_a_badge() -> None:
    known = badges()
    missing = [
        f"{e.__name__}.{v.name}" for e in STATUS_ENUMS for v in e if v.value.upper() not in known
    ]
    assert missing == []


def test_every_event_status_has_a_badge() -> None:
    found = event_statuses()
    # the scan sees what it must: the statuses the issue found drawn with a `?`
    assert {"DEPLOY", "DEPLOYING", "SIGNALLED", "DEPLOY_COMPLETE", "DEPLOY_FAILED"} <= set(found)
    known = badges()
    assert {s: where for s, where in found.items() if s not in known} == {}


def test_a_finished_rollout_is_not_drawn_busy() -> None:
    known = badges()
    for done in (WorkloadPhase.COMPLETE, RolloutPhase.DONE, DeploymentStatus.COMPLETE):
        assert known[done.value.upper()][0] == "ok", done
    for failed in (DeploymentStatus.FAILED, ActionStatus.FAILED, ClusterStatus.ERROR):
        assert known[failed.value.upper()][0] == "bad", failed


def test_every_badge_has_a_shape_and_a_colour() -> None:
    css = static("shoal.css")
    for status, (cls, shape) in badges().items():
        assert shape.strip() and shape != "?", status
        assert f".s-{cls} " in css or f".s-{cls}{{" in css, (status, cls)

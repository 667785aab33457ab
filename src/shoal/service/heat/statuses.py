"""Heat's statuses read from Shoal's actions: `CREATE_IN_PROGRESS`, `UPDATE_COMPLETE`, ...

The stack's action is its newest top-level cluster action's kind (a create, a delete, a repair
is Heat's CHECK, every other change an UPDATE); its status is that action's (waiting or running:
IN_PROGRESS; succeeded: COMPLETE; failed or cancelled: FAILED). A TestResource's knobs stretch
or fail it as Heat's TestResource would: `wait_secs` (or `action_wait_secs` for the action) keeps
it IN_PROGRESS that long after the action began, `fail` makes it FAILED once the wait is over.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from shoal.model.enums import ActionKind, ActionStatus
from shoal.store.records import ActionRecord

_ACTIONS = {
    ActionKind.CLUSTER_CREATE: "CREATE",
    ActionKind.CLUSTER_DELETE: "DELETE",
    ActionKind.CLUSTER_RECOVER: "CHECK",
}


def heat_action(kind: ActionKind) -> str:
    return _ACTIONS.get(kind, "UPDATE")


def heat_status(status: ActionStatus) -> str:
    if status is ActionStatus.SUCCEEDED:
        return "COMPLETE"
    if status in (ActionStatus.FAILED, ActionStatus.CANCELLED):
        return "FAILED"
    return "IN_PROGRESS"


def iso(ts: float | None) -> str | None:
    """Heat's times: UTC to the second, `Z` suffixed."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Knobs:
    """A TestResource's wait for an action and whether it fails (Heat's TestResource)."""

    wait_s: float = 0.0
    fail: bool = False


def knobs_of(props: dict[str, object], action: str) -> Knobs:
    waits = props.get("action_wait_secs")
    wait = waits.get(action.lower()) if isinstance(waits, dict) else None
    if wait is None:
        wait = props.get("wait_secs", 0)
    seconds = float(wait) if isinstance(wait, int | float) and not isinstance(wait, bool) else 0.0
    return Knobs(seconds, props.get("fail") is True and action != "DELETE")


@dataclass(frozen=True, slots=True)
class Phase:
    """Where one action stands for Heat: its action word, status, reason and end time."""

    action: str
    status: str
    reason: str
    started: float
    ended: float | None


def phase_of(a: ActionRecord, knobs: Knobs, now: float) -> Phase:
    """The action `a` as Heat would show it, a TestResource's knobs applied."""
    action, status = heat_action(a.kind), heat_status(a.status)
    started = a.started_at or a.created_at
    ended = a.ended_at
    reason = a.status_reason or ""
    if status == "COMPLETE" and knobs.wait_s > 0:
        until = started + knobs.wait_s
        if now < until:
            return Phase(action, "IN_PROGRESS", f"Stack {action} started", started, None)
        ended = max(ended or until, until)
    if status == "COMPLETE" and knobs.fail:
        return Phase(action, "FAILED", "ValueError: Test Resource failed", started, ended)
    if status == "COMPLETE":
        reason = f"Stack {action} completed successfully"
    elif status == "IN_PROGRESS":
        reason = f"Stack {action} started"
    return Phase(action, status, reason, started, ended)

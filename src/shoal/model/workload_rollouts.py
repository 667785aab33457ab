"""What a workload's replicas run, as a value with a revision (issue 22, item 4): a change of
image, command, args, env or ports is a new revision, rolled out in batches; the previous
revision is kept (store/workload_rollouts.py) so a failed rollout can start it again. Env is
part of the revision's digest but not of the value: the value is persisted, and env may name
secrets. (model/rollouts.py is the other rolling update: deployments' software.)"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from shoal.model.workloads import Workload


@dataclass(frozen=True, slots=True)
class ContainerRun:
    """What one container of a replica runs."""

    name: str
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReplicaTemplate:
    """A workload's Pod template as a runtime starts it; `revision` names it."""

    revision: str
    containers: tuple[ContainerRun, ...]


class WorkloadPhase(StrEnum):
    COMPLETE = "COMPLETE"
    """Every replica runs the target revision (also a workload that never changed)."""
    ROLLING = "ROLLING"
    """Replicas move to the target revision a batch at a time."""
    ROLLING_BACK = "ROLLING_BACK"
    """A batch failed: replicas move back to the previous revision."""
    ROLLED_BACK = "ROLLED_BACK"
    """Every replica runs the previous revision again; the document's (failed) one is not
    tried again until the document changes once more."""


def replica_template(w: Workload) -> ReplicaTemplate:
    """The workload's template and its revision: a digest of what a rollout replaces."""
    h = hashlib.sha256()
    for c in w.containers:
        parts = (
            c.name,
            c.image,
            repr(c.command),
            repr(c.args),
            repr(sorted((k, repr(v)) for k, v in c.env.items())),
            repr(c.ports),
        )
        for p in parts:
            h.update(p.encode())
            h.update(b"\0")
    return ReplicaTemplate(
        h.hexdigest()[:16],
        tuple(ContainerRun(c.name, c.image, c.command, c.args) for c in w.containers),
    )

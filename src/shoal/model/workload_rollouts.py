"""What a workload's replicas run, as a value with a revision (issue 22, item 4): a change of
image, command, args, env or ports is a new revision, rolled out in batches; the previous
revision is kept (store/workload_rollouts.py) so a failed rollout can start it again. All env
is part of the revision's digest; only the env given as values (no secret, output or members
source) is part of the value, which is persisted. (model/rollouts.py is the other rolling
update: deployments' software.)"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum

from shoal.model.software import LiteralInput
from shoal.model.workloads import Container, Workload


@dataclass(frozen=True, slots=True)
class ContainerRun:
    """What one container of a replica runs."""

    name: str
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    """The env variables given as values in the document (literals and parameters, never a
    secret: those are `{secret: NAME}` sources, not in here), which a real runtime sets; kept
    with the template so a restart or a rollback starts the same env."""
    secret_env: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    """The env from `{secret: NAME}` sources, set only on the copy a runtime is handed at start
    (engine/workload_env.py): never stored with the template, never printed (a runtime passes
    it outside its command line)."""
    cpu_milli: int = field(default=0, compare=False)
    """Limits a real runtime sets where it can (0: none)."""
    memory_mb: int = field(default=0, compare=False)


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
        tuple(
            ContainerRun(
                c.name,
                c.image,
                c.command,
                c.args,
                env=_literal_env(c),
                cpu_milli=c.cpu_milli,
                memory_mb=c.memory_mb,
            )
            for c in w.containers
        ),
    )


def _literal_env(c: Container) -> tuple[tuple[str, str], ...]:
    """The env values known from the document alone (literals and parameters); secrets,
    outputs and members are resolved elsewhere (not by a runtime's template)."""
    found: list[tuple[str, str]] = []
    for name, source in sorted(c.env.items()):
        if isinstance(source, LiteralInput):
            v = source.value
            found.append((name, v if isinstance(v, str) else json.dumps(v)))
    return tuple(found)

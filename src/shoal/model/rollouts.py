"""A config change rolling through a deployment's nodes, and the revision it can roll back to.

A deployment whose config or inputs changed runs UPDATE on nodes that completed it before.
When its target group declares an update policy, that UPDATE *rolls*: batch by batch, each
batch gated on health, paused between, and rolled back to the revision each node completed
before when a batch fails. `SoftwareRollout` is where such a roll stands (one per cluster and
deployment, stored, so another engine resumes it); `Revision` is what a node ran before, kept on
its row so the agents can be served it again. Typed here, JSON only at the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast

from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    HookGroup,
    IOType,
    Json,
    SoftwareConfig,
)


def config_to_json(c: SoftwareConfig) -> dict[str, Json]:
    """A config as published to a node (so it can be served again after the document moved)."""
    return {
        "name": c.name,
        "group": str(c.group),
        "config": c.config,
        "inputs": [
            {
                "name": i.name,
                "type": str(i.type),
                "default": i.default,
                "description": i.description,
            }
            for i in c.inputs
        ],
        "outputs": [
            {
                "name": o.name,
                "type": str(o.type),
                "error_output": o.error_output,
                "description": o.description,
            }
            for o in c.outputs
        ],
        "options": dict(c.options),
    }


def config_from_json(data: Mapping[str, Any]) -> SoftwareConfig:
    return SoftwareConfig(
        name=str(data["name"]),
        group=HookGroup(data["group"]),
        config=str(data["config"]),
        inputs=tuple(
            ConfigInput(
                str(i["name"]),
                IOType(i.get("type", IOType.STRING)),
                cast(Json, i.get("default")),
                str(i.get("description", "")),
            )
            for i in data.get("inputs") or ()
        ),
        outputs=tuple(
            ConfigOutput(
                str(o["name"]),
                IOType(o.get("type", IOType.STRING)),
                bool(o.get("error_output", False)),
                str(o.get("description", "")),
            )
            for o in data.get("outputs") or ()
        ),
        options=cast(dict[str, Json], dict(data.get("options") or {})),
    )


@dataclass(frozen=True, slots=True)
class Revision:
    """What a node last completed of a deployment before a newer config was published to it:
    enough to publish it again (a rollback). Secret inputs stay redacted here; the node's
    metadata fills them from the document as for any run."""

    config: SoftwareConfig
    digest: str
    inputs: Mapping[str, Json] = field(default_factory=dict, hash=False)
    """Resolved values, secrets redacted."""
    secret_inputs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Json]:
        return {
            "config": config_to_json(self.config),
            "digest": self.digest,
            "inputs": dict(self.inputs),
            "secret_inputs": list(self.secret_inputs),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Revision:
        return cls(
            config=config_from_json(data["config"]),
            digest=str(data["digest"]),
            inputs=cast(dict[str, Json], dict(data.get("inputs") or {})),
            secret_inputs=tuple(str(s) for s in data.get("secret_inputs") or ()),
        )


class RolloutPhase(StrEnum):
    RUN = "run"
    """The current batch's UPDATE runs."""
    GATE = "gate"
    """The current batch completed; its nodes are checked until healthy or the gate's time."""
    PAUSE = "pause"
    """Waiting the policy's `pause_s` before the next batch."""
    ROLLBACK = "rollback"
    """A batch failed: the nodes already updated are given their previous revision again."""
    DONE = "done"
    """Every batch completed and passed its gate."""
    ROLLED_BACK = "rolled_back"
    """Stopped and rolled back; not tried again until the document changes the deployment."""
    STOPPED = "stopped"
    """Stopped without (complete) rollback: the previous revision was unknown or failed too."""

    @property
    def is_final(self) -> bool:
        return self in (RolloutPhase.DONE, RolloutPhase.ROLLED_BACK, RolloutPhase.STOPPED)


@dataclass(frozen=True, slots=True)
class SoftwareRollout:
    """Where a deployment's rolling UPDATE stands on one cluster."""

    deployment: str
    revision: str
    """The deployment as the document declares it (`planning.software.revision`): a rollout
    that ended ROLLED_BACK or STOPPED holds its UPDATE back while this stays the same."""
    group: str
    batches: tuple[tuple[str, ...], ...]
    """Node names per batch, in order; nodes found due later are appended as more batches."""
    started: int = 1
    """Batches started (the current one is `batches[started - 1]`)."""
    phase: RolloutPhase = RolloutPhase.RUN
    gate_until: float = 0.0
    gate_next: float = 0.0
    resume_at: float = 0.0
    reason: str = ""
    """Why it stopped or rolled back."""
    restored: tuple[str, ...] = ()
    """Nodes given their previous revision again (during and after a rollback)."""
    started_at: float = 0.0
    updated_at: float = 0.0

    @property
    def current(self) -> tuple[str, ...]:
        return self.batches[self.started - 1] if 0 < self.started <= len(self.batches) else ()

    @property
    def updated(self) -> tuple[str, ...]:
        """Nodes of the batches started so far (the ones a rollback gives back their past)."""
        return tuple(n for b in self.batches[: self.started] for n in b)

    def summary(self) -> str:
        """One line for people: `batch 2 of 3 (gate)`, `rolled back: …`."""
        n = len(self.batches)
        match self.phase:
            case RolloutPhase.DONE:
                return f"rolled out ({n} batch{'es' if n != 1 else ''})"
            case RolloutPhase.ROLLED_BACK:
                return f"rolled back at batch {self.started} of {n}: {self.reason}"
            case RolloutPhase.STOPPED:
                return f"stopped at batch {self.started} of {n}: {self.reason}"
            case RolloutPhase.ROLLBACK:
                return f"rolling back ({self.reason})"
            case _:
                return f"batch {self.started} of {n} ({self.phase})"

    def to_json(self) -> dict[str, Json]:
        return {
            "deployment": self.deployment,
            "revision": self.revision,
            "group": self.group,
            "batches": [list(b) for b in self.batches],
            "started": self.started,
            "phase": str(self.phase),
            "gate_until": self.gate_until,
            "gate_next": self.gate_next,
            "resume_at": self.resume_at,
            "reason": self.reason,
            "restored": list(self.restored),
            "started_at": self.started_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SoftwareRollout:
        return cls(
            deployment=str(data["deployment"]),
            revision=str(data["revision"]),
            group=str(data.get("group", "")),
            batches=tuple(tuple(str(n) for n in b) for b in data.get("batches") or ()),
            started=int(data.get("started", 1)),
            phase=RolloutPhase(data.get("phase", RolloutPhase.RUN)),
            gate_until=float(data.get("gate_until", 0.0)),
            gate_next=float(data.get("gate_next", 0.0)),
            resume_at=float(data.get("resume_at", 0.0)),
            reason=str(data.get("reason", "")),
            restored=tuple(str(n) for n in data.get("restored") or ()),
            started_at=float(data.get("started_at", 0.0)),
            updated_at=float(data.get("updated_at", 0.0)),
        )

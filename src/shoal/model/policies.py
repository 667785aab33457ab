"""Policies: how Shoal manages a cluster once it exists — health, updates, deletion, scaling.

Each is a frozen value attached in the document to the cluster (a default for every node group)
or to one node group (which wins). The engine reads them; nothing here acts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CheckKind(StrEnum):
    PROVIDER = "provider"
    """The provider's own view of the resource (ACTIVE or not)."""
    TCP = "tcp"
    HTTP = "http"


class Recovery(StrEnum):
    REBOOT = "reboot"
    REBUILD = "rebuild"
    REPLACE = "replace"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Threshold:
    """A count of nodes, or a percentage of a node group (`percent` True)."""

    value: int
    percent: bool = False

    def limit(self, size: int) -> int:
        """The largest number of nodes this allows out of `size`."""
        return (size * self.value) // 100 if self.percent else self.value

    def __str__(self) -> str:
        return f"{self.value}%" if self.percent else str(self.value)


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    check: CheckKind = CheckKind.PROVIDER
    path: str = "/health"
    port: int | None = None
    """Port to probe; None: the port in the node's address."""
    expected_codes: tuple[int, ...] = (200,)
    interval_s: float = 10.0
    timeout_s: float = 2.0
    failures: int = 3
    """Consecutive failed checks before a node is unhealthy."""
    grace_s: float = 30.0
    """New nodes are not judged before they are this old."""
    recovery: Recovery = Recovery.REPLACE
    max_unhealthy: Threshold = Threshold(40, percent=True)
    """Above this many unhealthy nodes in a group at once, Shoal stops remediating and warns."""


@dataclass(frozen=True, slots=True)
class UpdatePolicy:
    """How a node group's nodes are replaced when its profile changes (rolling update)."""

    max_unavailable: int = 1
    max_surge: int = 0
    pause_s: float = 0.0
    health_gate: bool = True
    """A batch counts only when its new nodes pass the health check."""
    gate_timeout_s: float = 300.0
    failure_threshold: int = 1
    """Failed nodes in one batch that stop the update and roll it back."""


class VictimOrder(StrEnum):
    OLDEST_FIRST = "oldest_first"
    YOUNGEST_FIRST = "youngest_first"
    OLDEST_PROFILE_FIRST = "oldest_profile_first"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class DeletionPolicy:
    """Which nodes go first when a group shrinks."""

    victims: VictimOrder = VictimOrder.YOUNGEST_FIRST
    balance_zones: bool = True
    """Take victims from the zones with the most nodes first, so zones stay balanced."""


class AdjustmentType(StrEnum):
    EXACT_CAPACITY = "EXACT_CAPACITY"
    CHANGE_IN_CAPACITY = "CHANGE_IN_CAPACITY"
    CHANGE_IN_PERCENTAGE = "CHANGE_IN_PERCENTAGE"


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    """What a scaling trigger does to a node group (a webhook carries only "out" or "in")."""

    adjustment_type: AdjustmentType = AdjustmentType.CHANGE_IN_CAPACITY
    number: float = 1
    min_step: int = 1
    cooldown_s: float = 60.0
    strict: bool = False
    """False: clamp to the group's min/max instead of refusing."""


class StrayHandling(StrEnum):
    REPORT = "report"
    DELETE = "delete"

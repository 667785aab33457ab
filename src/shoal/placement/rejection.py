"""Why a filter turned a candidate zone or host down, as data rather than text.

A filter answers None or a `Rejection`: its kind, and the grouping or resource it names.
The search only asks "rejected or not"; `explain.diagnose` counts rejections (they are
hashable values) and words them in the user's names. Nomad records `FilterNode(node,
reason)` the same way, and Kubernetes answers a coded `Status`: a reason is never parsed
back out of a string.

Rejections that name nothing variable are module constants, and a grouping's rejection is
made once per constraint (`Constraint.rejection`), so the hot path allocates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RejectionKind(StrEnum):
    ZONE_NOT_ALLOWED = "zone-not-allowed"
    """The zone is not among the node's own zones."""
    ZONE_AFFINITY = "zone-affinity"
    """The item's zone-affinity block already uses another zone."""
    ZONE_PINNED = "zone-pinned"
    """The item is tied to an existing host in another zone."""
    HOST_PINNED = "host-pinned"
    """The item is tied to another existing host."""
    CAPACITY = "capacity"
    """The host lacks free room of one resource (`Rejection.resource`)."""
    GROUPING = "grouping"
    """A hard grouping (anti-affinity or spread) rules the domain out (`Rejection.grouping`)."""


@dataclass(frozen=True, slots=True)
class Rejection:
    kind: RejectionKind
    constraint: int = -1
    """The index of the constraint (`PlacementProblem.constraints`), for `GROUPING`."""
    grouping: str = ""
    """The grouping's name, for `GROUPING`."""
    resource: str = ""
    """The resource lacking (`vcpus`, `ram_mb`, `disk_gb`, `volume_gb`), for `CAPACITY`."""


ZONE_NOT_ALLOWED = Rejection(RejectionKind.ZONE_NOT_ALLOWED)
ZONE_AFFINITY = Rejection(RejectionKind.ZONE_AFFINITY)
ZONE_PINNED = Rejection(RejectionKind.ZONE_PINNED)
HOST_PINNED = Rejection(RejectionKind.HOST_PINNED)


def lacking(resource: str) -> Rejection:
    return Rejection(RejectionKind.CAPACITY, resource=resource)


def ruled_out_by(constraint: int, grouping: str) -> Rejection:
    return Rejection(RejectionKind.GROUPING, constraint=constraint, grouping=grouping)

"""The closed vocabularies of the cluster model, as string enums.

Strings in documents become these enums at the edge, so a typo can never travel inward as a
"status" or a "rule" the way string statuses did in Senlin.
"""

from enum import StrEnum


class NodeKind(StrEnum):
    """What a node is; each kind has its own profile type."""

    SERVER = "server"
    VOLUME = "volume"


class Rule(StrEnum):
    """The placement rule of a grouping."""

    AFFINITY = "affinity"
    ANTI_AFFINITY = "anti-affinity"
    SOFT_AFFINITY = "soft-affinity"
    SOFT_ANTI_AFFINITY = "soft-anti-affinity"
    SPREAD = "spread"

    @property
    def is_hard(self) -> bool:
        return self in (Rule.AFFINITY, Rule.ANTI_AFFINITY, Rule.SPREAD)


class Scope(StrEnum):
    """The failure domain a grouping rule is about."""

    HOST = "host"
    ZONE = "zone"


class Objective(StrEnum):
    """What the solver optimises once every hard rule holds."""

    SPREAD = "spread"
    PACK = "pack"

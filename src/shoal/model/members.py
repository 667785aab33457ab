"""A reference to a member of the cluster: an instance, a node group, or one part of a unit.

Its own module because both the cluster (`model/cluster.py`) and its software
(`model/software.py`) name members, and the cluster carries its software: the reference sits
below both so neither imports the other's dependents.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MemberRef:
    """A grouping member: an instance, every replica of a node group, or one part of it."""

    target: str
    part: str | None = None

    def __str__(self) -> str:
        return self.target if self.part is None else f"{self.target}/{self.part}"

    @classmethod
    def parse(cls, text: str) -> MemberRef:
        target, sep, part = text.partition("/")
        return cls(target, part if sep else None)

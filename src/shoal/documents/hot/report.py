"""What reading a HOT template found: problems, notices, and what Shoal cannot do yet.

Problems make the template invalid (all of them reported at once, with JSON pointers).
Notices are things read and deliberately ignored (an `event_sinks` section, a custom
constraint). Unsupported items are problems too, but each also carries a short reason key
("type OS::Neutron::Port", "function yaql") so a corpus run can count templates by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import ProblemList
from shoal.model.problems import Problem


@dataclass(frozen=True, slots=True)
class Unsupported:
    """Something valid in Heat that Shoal does not do: `reason` is the key it is counted by."""

    reason: str
    path: str
    message: str = ""
    """The problem's message (what tells it from a mistake at the same pointer)."""


@dataclass(slots=True)
class Report:
    out: ProblemList = field(default_factory=ProblemList)
    notices: list[Problem] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)
    skipped: list[Unsupported] = field(default_factory=list)
    """Parts left out of the cluster with a notice (not problems), counted by reason: the
    outputs Shoal cannot serve."""

    def problem(self, path: str, message: str) -> None:
        self.out.add(path, message)

    def notice(self, path: str, message: str) -> None:
        if Problem(path, message) not in self.notices:
            self.notices.append(Problem(path, message))

    def cannot(self, reason: str, path: str, message: str) -> None:
        """Valid Heat that Shoal does not support: a problem, counted under `reason`."""
        self.unsupported.append(Unsupported(reason, path, message))
        self.out.add(path, message)

    def mark(self) -> tuple[int, int, int]:
        """Where the report is now, for `forget_since` (a part read only on trial)."""
        return len(self.out.items), len(self.unsupported), len(self.notices)

    def forget_since(self, mark: tuple[int, int, int]) -> bool:
        """Drop what was reported since `mark`; True if a problem had been."""
        found = len(self.out.items) > mark[0]
        del self.out.items[mark[0] :]
        del self.unsupported[mark[1] :]
        del self.notices[mark[2] :]
        return found

    def skip(self, reason: str, path: str, message: str) -> None:
        """Valid Heat left out of the cluster with a notice, counted under `reason`."""
        self.skipped.append(Unsupported(reason, path))
        self.notice(path, message)

"""Which busy clusters' servers changed since the manager last looked (issue 26: members
follow mid-action).

The manager's tick loads only settled clusters' nodes, which keeps it cheap while thousands of
clusters scale; so a balancer's pool would keep its old servers until an action ends. Instead,
the node work marks a cluster here when it writes a node's new status (a server became ACTIVE,
went away, failed), and the manager loads the nodes of marked busy clusters only, a bounded
number per tick, to re-sync their networking. Per process: node work that ran in another
engine marks nothing here, and that cluster's members catch up when its action ends, as before.
"""

from __future__ import annotations

MAX_MARKED = 10_000
"""Clusters remembered at most; beyond it the oldest mark is dropped (that cluster catches up
when its action ends, as without marks)."""

PER_TICK = 64
"""Marked clusters the manager takes per tick; the rest wait for the next one."""


class MemberMarks:
    """An ordered, bounded set of cluster ids (insertion order: the oldest mark first)."""

    def __init__(self, limit: int = MAX_MARKED) -> None:
        self.limit = limit
        self._marked: dict[str, None] = {}

    def mark(self, cluster_id: str) -> None:
        if cluster_id in self._marked:
            return
        if len(self._marked) >= self.limit:
            del self._marked[next(iter(self._marked))]
        self._marked[cluster_id] = None

    def take(self, count: int = PER_TICK) -> list[str]:
        """Up to `count` marks, oldest first, removed from the set."""
        out: list[str] = []
        for cid in self._marked:
            if len(out) >= count:
                break
            out.append(cid)
        for cid in out:
            del self._marked[cid]
        return out

    def __len__(self) -> int:
        return len(self._marked)

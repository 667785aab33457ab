"""Which settled clusters a management tick looks at (issue 37): those that changed or whose
checks are due, not every cluster every second.

At 10,000 clusters of 200,000 nodes over 3 engines, a tick that read every node and listed
every cluster's resources every few seconds cost each idle engine many times what it costs
with no cluster at all. With a provider that says what changed (`ChangeFeed`, as Nova's
`changes-since`), a cluster is looked at only when:
- it is new to this engine, or its row changed since its last look (the database's change
  counter, `store/clusters.ClusterCache`: every action on it, every status the manager writes);
- the provider's feed names it (a resource made, changed, gone, or its host failed or back),
  until a look has listed its resources again;
- a host its nodes were on left the inventory;
- its last look was not calm: something written, something in trouble, a repair waiting, a
  convergence under way, a node not judged healthy yet under a health policy; or it has
  workloads or networking (their keepers have their own timers);
- a health policy checks over the network (http, tcp): every interval, as before;
- `full_s` passed since its last look (a full look: insurance, spread over the clusters by
  their ids so they do not all come at once).
Without a feed every cluster is looked at every tick, as before.

What a per-cluster tick must keep (for the later reconcilers, issue 40): this selection runs
before any node is read; a skipped cluster keeps its per-node state (grace, failure counts);
a provider's change must stay "pending" until a look listed the resources after it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from shoal.model.cluster import ClusterSpec
from shoal.model.enums import Health
from shoal.model.policies import CheckKind
from shoal.providers.base import ChangeFeed, Provider
from shoal.store.records import ClusterRecord, NodeRecord

FULL_S = 300.0
"""A calm cluster is looked at whole at least this often."""


@dataclass(slots=True)
class _Look:
    row: tuple[object, ...]
    """The cluster row as last looked at (what a change of it changes)."""
    until: float
    """Look again by then."""
    hosts: frozenset[str]
    nodes: tuple[str, ...]
    """Its nodes' ids then (kept by the manager while it is not looked at)."""


def _row(c: ClusterRecord) -> tuple[object, ...]:
    return (c.generation, c.status, c.status_reason, c.lock_action_id, c.updated_at)


class Attention:
    """One engine's record of its clusters' last looks."""

    def __init__(self, provider: Provider, *, tick_s: float, full_s: float = FULL_S) -> None:
        self.feed = provider if isinstance(provider, ChangeFeed) else None
        self.tick_s = tick_s
        self.full_s = full_s
        self._cursor: int | None = None
        self._looks: dict[str, _Look] = {}
        self._pending: set[str] = set()
        """Clusters the feed named that no look has listed since."""
        self._everything = True
        """The feed could not tell what changed: every cluster is looked at once."""
        self._hosts: frozenset[str] | None = None

    async def poll(self) -> None:
        """Read the provider's feed (once a tick, before the clusters are chosen)."""
        if self.feed is None:
            return
        self._cursor, changed = await self.feed.changes_since(self._cursor)
        if changed is None:
            self._everything = True
        else:
            self._pending |= changed

    def hosts(self, names: frozenset[str]) -> None:
        """The inventory's hosts now: clusters with nodes on a host that left it are due."""
        before, self._hosts = self._hosts, names
        if before is None or before <= names:
            return
        lost = before - names
        for look in self._looks.values():
            if look.hosts & lost:
                look.until = 0.0

    def wants(self, cluster: ClusterRecord, now: float, busy_with: Iterable[str] = ()) -> bool:
        """Whether this tick looks at `cluster` (`busy_with`: clusters with repairs waiting)."""
        if self.feed is None or self._everything:
            return True
        look = self._looks.get(cluster.id)
        return (
            look is None
            or now >= look.until
            or look.row != _row(cluster)
            or cluster.id in self._pending
            or cluster.id in busy_with
        )

    def skipped(self) -> Iterable[str]:
        """Node ids of the clusters not looked at this tick (their per-node state is kept)."""
        return (n for look in self._looks.values() for n in look.nodes)

    def looked(
        self,
        cluster: ClusterRecord,
        spec: ClusterSpec | None,
        nodes: list[NodeRecord],
        *,
        calm: bool,
        listed: bool,
        now: float,
    ) -> None:
        """Record a look: `calm` when it found nothing to do, `listed` when it listed the
        cluster's resources (a change the feed named is then seen)."""
        if listed:
            self._pending.discard(cluster.id)
        until = now if not calm else now + self._full_after(cluster.id)
        if spec is not None and until > now:
            until = min(until, self._due(spec, nodes, now))
        self._looks[cluster.id] = _Look(
            _row(cluster),
            until,
            frozenset(n.host for n in nodes if n.host),
            tuple(n.id for n in nodes),
        )

    def settle(self, known: Iterable[str]) -> None:
        """After a tick: forget clusters no longer this engine's; a feed that could not tell
        has now been answered by looking at everything."""
        keep = set(known)
        for cid in [c for c in self._looks if c not in keep]:
            del self._looks[cid]
        self._pending &= keep
        self._everything = False

    def _full_after(self, cluster_id: str) -> float:
        """`full_s`, less up to a half by the cluster's id: full looks spread over time."""
        return self.full_s * (0.5 + (zlib.crc32(cluster_id.encode()) % 1000) / 2000)

    def _due(self, spec: ClusterSpec, nodes: list[NodeRecord], now: float) -> float:
        """When a calm cluster's health checks want it again."""
        if spec.health is None and all(g.health is None for g in spec.node_groups):
            return now + self.full_s
        due = now + self.full_s
        for group in spec.node_groups:
            policy = spec.health_of(group.name)
            if policy is None:
                continue
            if policy.check is not CheckKind.PROVIDER:
                due = min(due, now + policy.interval_s)  # probes over the network
        for n in nodes:
            if n.health != Health.HEALTHY and spec.health_of(n.group_name) is not None:
                return now  # not judged yet (grace, first checks): every tick, as before
        return due

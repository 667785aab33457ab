"""Which host-level rule each server hands to a backend that enforces rules itself.

As a tenant on OpenStack, Shoal cannot pin servers to hosts: it places them at zone level and
turns host-scoped groupings into Nova server groups, so Nova's scheduler keeps the rule. Nova
lets a server join one server group only, so each server gets the one grouping that matters
most to it: hard rules before soft ones, then the grouping with the most servers, then the
first declared. Groupings with fewer than two servers (a server with its volume, say) say
nothing Nova could enforce and are skipped; `spread` has no Nova equivalent. Every rule is
still placed and verified by Shoal itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from shoal.model.cluster import ClusterSpec, Grouping
from shoal.model.enums import NodeKind, Rule, Scope

_NOVA_RULES = (Rule.AFFINITY, Rule.ANTI_AFFINITY, Rule.SOFT_AFFINITY, Rule.SOFT_ANTI_AFFINITY)

Member = tuple[str, str | None]
"""A node's (group or instance name, part)."""


def _is_member(g: Grouping, member: Member) -> bool:
    target, part = member
    return any(ref.target == target and ref.part in (None, part) for ref in g.members)


def _members(spec: ClusterSpec) -> Iterator[tuple[Member, NodeKind, int]]:
    """Each instance and each group's part, with its kind and how many nodes it stands for
    (`expand(spec)`'s nodes, counted)."""
    for inst in spec.instances:
        yield (inst.name, None), inst.profile.kind, 1
    for group in spec.node_groups:
        replicas = group.count if group.replicas is None else len(group.replicas)
        for p in group.parts:
            yield (group.name, p.part), p.profile.kind, replicas


class ServerGroups:
    """The server-group hint of every server of `spec`, as a row for an action's inputs."""

    def __init__(self, spec: ClusterSpec) -> None:
        servers: set[Member] = set()
        count: dict[str, int] = {}
        candidates = [g for g in spec.groupings if g.scope is Scope.HOST and g.rule in _NOVA_RULES]
        # Counted per group and part, not per node: issue 23, expanding a 100,000-node
        # cluster here to count its servers was about 3 % of planning its create.
        for member, kind, replicas in _members(spec):
            if kind is not NodeKind.SERVER:
                continue
            servers.add(member)
            for g in candidates:
                if _is_member(g, member):
                    count[g.name] = count.get(g.name, 0) + replicas
        ranked = sorted(
            (g for g in candidates if count.get(g.name, 0) >= 2),
            key=lambda g: (not g.rule.is_hard, -count[g.name]),
        )
        self._chosen: dict[Member, Grouping] = {}
        for member in servers:
            for g in ranked:
                if _is_member(g, member):
                    self._chosen[member] = g
                    break

    def of(self, group: str, part: str | None) -> dict[str, Any] | None:
        """The hint for a server of `group` (and `part`), or None if it joins no server group."""
        g = self._chosen.get((group, part))
        if g is None:
            return None
        limit = g.max_per_domain if g.rule is Rule.ANTI_AFFINITY and g.max_per_domain > 1 else None
        return {"grouping": g.name, "policy": str(g.rule), "max_per_host": limit}

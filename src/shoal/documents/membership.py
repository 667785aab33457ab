"""Grouping members: each must name an instance, a node group or one part of a unit, once; and
the hard rules between groupings must not contradict each other.

Contradictions caught here are the ones visible without an inventory: affinity and
anti-affinity over the same members, anti-affinity at host between parts of one unit (which
always share a host), and affinity between members whose zones cannot meet.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from shoal.documents.collect import ProblemList
from shoal.documents.drafts import ClusterDraft, GroupingDraft
from shoal.documents.names import is_name, listing, suggest
from shoal.model.cluster import MemberRef
from shoal.model.enums import Rule, Scope


@dataclass(frozen=True, slots=True)
class _Target:
    """What a grouping may refer to: an instance or a node group, as far as it was read."""

    kind: str
    units: int | None
    """How many host-sharing units it has: 1 for an instance, the count for a group."""
    parts: tuple[str, ...] | None
    """Unit part names; () for an instance or single-profile group; None when unknown."""
    zones: frozenset[str] | None
    """Zones it may use; None when any zone or unknown."""


@dataclass(frozen=True, slots=True)
class _Checked:
    """A grouping whose members all resolved."""

    grouping: GroupingDraft
    rule: Rule
    scope: Scope
    refs: tuple[MemberRef, ...]


def check_groupings(draft: ClusterDraft, out: ProblemList) -> None:
    targets = _targets(draft)
    checked: list[_Checked] = []
    for g in draft.groupings:
        refs = _members(g, targets, out)
        if refs is None or g.rule is None or g.scope is None:
            continue
        c = _Checked(g, g.rule, g.scope, refs)
        _unit_parts_apart(c, out)
        _zones_meet(c, targets, out)
        checked.append(c)
    _contradictions(checked, targets, out)


def _targets(draft: ClusterDraft) -> dict[str, _Target]:
    targets: dict[str, _Target] = {}
    for i in draft.instances:
        if i.label is not None and i.label not in targets:
            zone = i.zone or (i.profile.zone if i.profile is not None else None)
            known = i.profile is not None or i.zone is not None
            targets[i.label] = _Target(
                "instance", 1, (), frozenset([zone]) if zone and known else None
            )
    for g in draft.groups:
        if g.label is None or g.label in targets:
            continue
        parts = None if g.parts is None else tuple(p.part for p in g.parts if p.part is not None)
        zones: frozenset[str] | None = None
        if g.zones:
            zones = frozenset(g.zones)
        elif g.parts is not None:
            pinned = {p.profile.zone for p in g.parts if p.profile is not None and p.profile.zone}
            zones = frozenset(pinned) if len(pinned) == 1 else None
        targets[g.label] = _Target("node group", g.count, parts, zones)
    return targets


def _members(
    g: GroupingDraft, targets: dict[str, _Target], out: ProblemList
) -> tuple[MemberRef, ...] | None:
    """The grouping's members as references, or None when any is broken (all reported)."""
    if g.members is None:
        return None
    if not g.members:
        out.add(g.members_path, "a grouping needs at least one member")
        return None
    refs: list[MemberRef] = []
    ok = True
    for text, path in g.members:
        ref = _member(text, path, targets, out)
        if ref is None:
            ok = False
            continue
        clash = next((r for r in refs if _overlap(r, ref)), None)
        if clash == ref:
            out.add(path, f"'{ref}' is listed twice in this grouping")
            ok = False
        elif clash is not None:
            wider, narrower = (clash, ref) if clash.part is None else (ref, clash)
            out.add(path, f"'{narrower}' is already included by '{wider}' in this grouping")
            ok = False
        refs.append(ref)
    return tuple(refs) if ok else None


def _member(
    text: str, path: str, targets: dict[str, _Target], out: ProblemList
) -> MemberRef | None:
    ref = MemberRef.parse(text)
    if not is_name(ref.target) or (ref.part is not None and not is_name(ref.part)):
        out.add(
            path,
            f"'{text}' is not a member: write an instance or node group name, or group/part",
        )
        return None
    target = targets.get(ref.target)
    if target is None:
        hint = suggest(ref.target, targets) or f"; members can be: {listing(targets)}"
        out.add(
            path,
            f"unknown member '{ref.target}': no node group or instance has this name{hint}",
        )
        return None
    if ref.part is None or target.parts is None:
        return ref
    if target.kind == "instance":
        out.add(path, f"'{ref.target}' is an instance and has no parts; write '{ref.target}'")
        return None
    if not target.parts:
        out.add(
            path,
            f"node group '{ref.target}' has a single profile, not a unit of parts; "
            f"write '{ref.target}'",
        )
        return None
    if ref.part not in target.parts:
        hint = suggest(ref.part, target.parts)
        out.add(
            path,
            f"node group '{ref.target}' has no part '{ref.part}'{hint}; "
            f"its parts are {listing(target.parts)}",
        )
        return None
    return ref


def _overlap(a: MemberRef, b: MemberRef) -> bool:
    return a.target == b.target and (a.part is None or b.part is None or a.part == b.part)


def _unit_parts_apart(c: _Checked, out: ProblemList) -> None:
    if c.rule is not Rule.ANTI_AFFINITY or c.scope is not Scope.HOST:
        return
    for a, b in combinations(c.refs, 2):
        if a.target == b.target and a.part is not None and b.part is not None:
            out.add(
                c.grouping.members_path,
                f"'{a}' and '{b}' are parts of the same unit and always share a host, so "
                "anti-affinity at host between them can never hold",
            )
            return


def _zones_meet(c: _Checked, targets: dict[str, _Target], out: ProblemList) -> None:
    if c.rule is not Rule.AFFINITY:
        return
    common: frozenset[str] | None = None
    seen: list[str] = []
    for ref in c.refs:
        zones = targets[ref.target].zones
        if zones is None:
            continue
        seen.append(f"{ref.target} ({', '.join(sorted(zones))})")
        common = zones if common is None else common & zones
        if not common:
            out.add(
                c.grouping.members_path,
                f"affinity keeps its members together, but their zones never meet: "
                f"{', '.join(seen)}",
            )
            return


def _contradictions(checked: list[_Checked], targets: dict[str, _Target], out: ProblemList) -> None:
    """Hard affinity and hard anti-affinity (max 1 per domain) over the same members."""
    for first, second in combinations(checked, 2):
        pair = _affinity_pair(first, second)
        if pair is None:
            continue
        together, apart = pair
        if together.scope is Scope.ZONE and apart.scope is Scope.HOST:
            continue  # the same zone on different hosts: both can hold
        shared = [
            t
            for t in dict.fromkeys(r.target for r in together.refs)
            if any(_overlap(x, y) for x in together.refs for y in apart.refs if x.target == t)
        ]
        if sum(targets[t].units or 0 for t in shared) < 2:
            continue
        if len(shared) == 1:
            what = f"the replicas of '{shared[0]}'"
        else:
            what = ", ".join(f"'{t}'" for t in shared[:-1]) + f" and '{shared[-1]}'"
        out.add(
            second.grouping.path,
            f"grouping '{apart.grouping.name}' ({apart.rule}, {apart.scope}) keeps {what} "
            f"apart, but grouping '{together.grouping.name}' ({together.rule}, "
            f"{together.scope}) keeps them together; both cannot hold",
        )


def _affinity_pair(a: _Checked, b: _Checked) -> tuple[_Checked, _Checked] | None:
    """(affinity, anti-affinity) when one of the two is each, hard, at most 1 per domain."""
    for together, apart in ((a, b), (b, a)):
        if (
            together.rule is Rule.AFFINITY
            and apart.rule is Rule.ANTI_AFFINITY
            and apart.grouping.max_per_domain in (None, 1)
        ):
            return together, apart
    return None

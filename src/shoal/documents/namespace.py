"""Names that must be unique: node groups and instances share one namespace, groupings have
their own, and no instance may take a name a node group gives (or will give) its nodes.

Replica i of group `web` is the node `web-i`, and part `data` of it is `web-i-data`
(`shoal.model.nodes.node_name`); an instance named `web-2` would be confused with it in every
listing, log and provider call.
"""

from __future__ import annotations

import re

from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft, GroupDraft

_REPLICA = re.compile(r"([1-9][0-9]*)(?:-(.+))?")


def check_names(draft: ClusterDraft, out: ProblemList) -> None:
    members = [("instance", i.name, i.path) for i in draft.instances]
    members += [("node group", g.name, g.path) for g in draft.groups]
    _unique(members, out, "; node groups and instances share one namespace")
    _unique([("grouping", g.name, g.path) for g in draft.groupings], out, "")
    _generated(draft, out)


def _unique(entries: list[tuple[str, str | None, str]], out: ProblemList, note: str) -> None:
    seen: dict[str, tuple[str, str]] = {}
    for kind, name, path in entries:
        if name is None:
            continue
        if name in seen:
            first_kind, first_path = seen[name]
            out.add(
                child(path, "name"),
                f"the name '{name}' is already used by the {first_kind} at {first_path}{note}",
            )
        else:
            seen[name] = (kind, path)


def _generated(draft: ClusterDraft, out: ProblemList) -> None:
    """Instances whose name is one a node group gives a replica, now or when it scales out."""
    groups = {g.name: g for g in draft.groups if g.name is not None and g.parts is not None}
    for inst in draft.instances:
        if inst.name is None:
            continue
        for cut in range(1, len(inst.name)):
            if inst.name[cut] != "-" or inst.name[:cut] not in groups:
                continue
            group = groups[inst.name[:cut]]
            replica = _replica_of(group, inst.name[cut + 1 :])
            if replica is None or replica > _ceiling(group):
                continue
            out.add(child(inst.path, "name"), _collision(inst.name, group, replica))
            break


def _replica_of(group: GroupDraft, rest: str) -> int | None:
    """The replica index if `rest` is what `group` appends to its name for one of its nodes."""
    match = _REPLICA.fullmatch(rest)
    if match is None or len(match.group(1)) > 18 or group.parts is None:
        return None
    part = match.group(2)
    if part not in {p.part for p in group.parts}:
        return None
    return int(match.group(1))


def _ceiling(group: GroupDraft) -> float:
    """The highest replica index the group can reach: its max, or no limit without one."""
    if group.max_size is None:
        return float("inf")
    return max(group.max_size, group.count or 0)


def _collision(name: str, group: GroupDraft, replica: int) -> str:
    part = name.removeprefix(f"{group.name}-{replica}").removeprefix("-")
    node = f"replica {replica} of node group '{group.name}' (at {group.path})"
    if part:
        node = f"part '{part}' of {node}"
    if group.count is not None and replica <= group.count:
        return f"the instance name '{name}' is also the name of {node}; rename the instance"
    return (
        f"the instance name '{name}' is the name {node} would get when the group scales out; "
        "rename the instance"
    )

"""A read template's shape, with its nested shapes, as Shoal's cluster draft.

- A server is an instance; a server with attached volumes is a unit (a node group of 1 whose
  parts share a host: the `server` part and one part per volume); a lone volume is an instance.
- A ResourceGroup (or Senlin cluster) of `count` members is a node group per member server (a
  unit when it has volumes) and per lone volume, each of `count`.
- A nested template used once contributes its elements under the resource's name (alone, the
  resource's own name; several, `resource-element`).
- A server group is a grouping of the elements whose servers name it in `scheduler_hints`.
- `depends_on` (explicit, or through functions) between resources that make nodes becomes
  the elements' `depends_on`; through resources that make none it is followed transitively.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import child
from shoal.documents.drafts import ClusterDraft, GroupDraft, GroupingDraft, InstanceDraft, PartDraft
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import ServerShape, Shape, VolumeShape


@dataclass(slots=True)
class _Unit:
    server: ServerShape
    volumes: list[VolumeShape] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Placed:
    """Where each template's resources ended up in the draft (what deployments target)."""

    elements: dict[tuple[str, str], list[str]]
    """(scope, resource) -> element names made for it, in every template read."""
    prefixes: dict[str, str]
    """Scope -> the element name prefix its elements got ("" for the top template)."""


@dataclass(slots=True)
class _Out:
    draft: ClusterDraft
    report: Report
    members: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    """(scope, server group) -> (element name, pointer) of its members."""
    made: dict[str, list[str]] = field(default_factory=dict)
    """Top-level resource -> element names made for it."""
    placed: Placed = field(default_factory=lambda: Placed({}, {}))


def assemble(shape: Shape, name: str | None, report: Report) -> tuple[ClusterDraft, Placed]:
    """The draft, and where each resource ended up in it (for deployments)."""
    out = _Out(ClusterDraft(name=name), report)
    _emit(out, shape, "", None, top=True)
    _groupings(out, shape)
    _dependencies(out, shape)
    return out.draft, out.placed


def _units(shape: Shape, report: Report) -> tuple[list[_Unit], list[VolumeShape]]:
    units = {s.name: _Unit(s) for s in shape.servers}
    volumes = {v.name: v for v in shape.volumes}
    taken: dict[str, str] = {}
    for a in shape.attachments:
        if a.volume in taken:
            report.cannot(
                "a volume attached twice",
                a.path,
                f"volume {a.volume} is already attached to {taken[a.volume]}; "
                "Shoal attaches a volume to one server",
            )
            continue
        if a.server in units and a.volume in volumes:
            taken[a.volume] = a.server
            units[a.server].volumes.append(volumes[a.volume])
    lone = [v for v in shape.volumes if v.name not in taken]
    return list(units.values()), lone


def _emit(out: _Out, shape: Shape, prefix: str, count: int | None, *, top: bool = False) -> None:
    units, lone = _units(shape, out.report)
    count_elements = len(units) + len(lone) + len(shape.nested) + len(shape.groups)

    def named(element: str) -> str:
        if not prefix:
            return element
        return prefix if count_elements == 1 else f"{prefix}-{element}"

    # A server member of a group shares its group's scope: the first (outer) prefix holds.
    out.placed.prefixes.setdefault(shape.scope, prefix)

    def made(resource: str, element: str) -> None:
        elements = out.placed.elements.setdefault((shape.scope, resource), [])
        if element not in elements:
            elements.append(element)
        if top:
            out.made.setdefault(resource, []).append(element)

    for u in units:
        n = named(u.server.name)
        made(u.server.name, n)
        for v in u.volumes:
            made(v.name, n)
        if u.server.group is not None:
            key = (u.server.group.scope, u.server.group.name)
            out.members.setdefault(key, []).append((n, u.server.path))
        if not u.volumes and count is None:
            out.draft.instances.append(
                InstanceDraft(u.server.path, n, name=n, profile=u.server.profile)
            )
            continue
        parts = [PartDraft(None, u.server.profile, u.server.path)]
        if u.volumes:
            parts = [PartDraft("server", u.server.profile, u.server.path)]
            parts += [PartDraft(v.name, v.profile, v.path) for v in u.volumes]
        # a unit outside a group is one; a group of count 0 (a role switched off) stays empty
        size = 1 if count is None else count
        out.draft.groups.append(GroupDraft(u.server.path, n, name=n, parts=parts, count=size))
    for v in lone:
        n = named(v.name)
        made(v.name, n)
        if count is None:
            out.draft.instances.append(InstanceDraft(v.path, n, name=n, profile=v.profile))
        else:
            parts = [PartDraft(None, v.profile, v.path)]
            out.draft.groups.append(GroupDraft(v.path, n, name=n, parts=parts, count=count))
    for nested in shape.nested:
        n = named(nested.name)
        mark = _mark(out.draft)
        _emit(out, nested.shape, n, count)
        for element, _ in _since(out.draft, mark):
            made(nested.name, element)
    for g in shape.groups:
        if count is not None:
            out.report.cannot(
                "a group inside a group",
                g.path,
                f"{g.name} is a group inside a group member; Shoal's node groups do not nest",
            )
            continue
        if g.count is None:
            continue
        n = named(g.name)
        mark = _mark(out.draft)
        _emit(out, g.member, n, g.count)
        for element, grp in _since(out.draft, mark):
            made(g.name, element)
            if grp is not None:
                grp.min_size = min(g.min_size, g.count)
                grp.max_size = g.max_size
    if count is not None:
        for sg in shape.server_groups:
            if len(out.members.get((shape.scope, sg.name), [])) > 1:
                out.report.cannot(
                    "a server group inside a group member",
                    sg.path,
                    f"server group {sg.name} applies within each member of a group; Shoal's "
                    "groupings apply across a whole node group",
                )
            elif sg.rule is not None:
                out.report.notice(
                    sg.path, f"server group {sg.name} has one server per member: nothing to place"
                )


def _mark(draft: ClusterDraft) -> tuple[int, int]:
    return len(draft.instances), len(draft.groups)


def _since(draft: ClusterDraft, mark: tuple[int, int]) -> list[tuple[str, GroupDraft | None]]:
    """The elements emitted after `mark` (by name, a group with its draft), each name once.

    Drafts are only appended to, so this is linear in what was added: a template of thousands
    of groups is read in linear time (a set of every name per group was quadratic)."""
    found: dict[str, GroupDraft | None] = {}
    for i in draft.instances[mark[0] :]:
        if i.name:
            found.setdefault(i.name, None)
    for g in draft.groups[mark[1] :]:
        if g.name and found.get(g.name) is None:
            found[g.name] = g
    return list(found.items())


def _groupings(out: _Out, shape: Shape, prefix: str = "") -> None:
    """Server groups of the template and of nested templates used once (named under them)."""
    for sg in shape.server_groups:
        members = out.members.get((shape.scope, sg.name), [])
        if not members:
            out.report.notice(sg.path, f"server group {sg.name} has no servers: nothing to place")
            continue
        name = f"{prefix}-{sg.name}" if prefix else sg.name
        out.draft.groupings.append(
            GroupingDraft(
                sg.path,
                name,
                child(sg.path, "properties", "policies"),
                name=name,
                members=list(members),
                rule=sg.rule,
                max_per_domain=sg.max_per_host,
            )
        )
    for nested in shape.nested:
        _groupings(out, nested.shape, f"{prefix}-{nested.name}" if prefix else nested.name)


def _dependencies(out: _Out, shape: Shape) -> None:
    makers = set(out.made)
    for resource, elements in out.made.items():
        deps = _reachable(shape.depends, resource, makers)
        names = sorted({e for d in deps for e in out.made.get(d, []) if e not in elements})
        if not names:
            continue
        drafts: list[InstanceDraft | GroupDraft] = [*out.draft.instances, *out.draft.groups]
        for draft in drafts:
            if draft.name in elements and draft.depends_on is not None:
                have = {n for n, _ in draft.depends_on}
                draft.depends_on += [
                    (n, child(draft.path, "depends_on")) for n in names if n not in have
                ]


def _reachable(graph: dict[str, set[str]], start: str, makers: set[str]) -> set[str]:
    """Node-making resources `start` depends on, following through those that make none."""
    found: set[str] = set()
    seen = {start}
    todo = list(graph.get(start, ()))
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in makers:
            found.add(n)
        else:
            todo.extend(graph.get(n, ()))
    return found

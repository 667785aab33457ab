"""`depends_on` between node groups and instances: every name known, no element depending on
itself, and no cycle, since a cycle would leave nothing that could be created first.

A cycle is reported once, at the `depends_on` of its first member in document order, as the
path around it: "dependency cycle: app -> db -> cache -> app".
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from shoal.documents.collect import ProblemList
from shoal.documents.drafts import ClusterDraft, Located
from shoal.documents.names import suggest


@dataclass(frozen=True, slots=True)
class _Node:
    name: str
    path: str
    depends_on: list[Located] | None


def check_dependencies(draft: ClusterDraft, out: ProblemList) -> None:
    nodes = [_Node(i.label, i.path, i.depends_on) for i in draft.instances if i.label]
    nodes += [_Node(g.label, g.path, g.depends_on) for g in draft.groups if g.label]
    known = {n.name for n in nodes}
    edges: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for node in nodes:
        if node.name in edges or node.depends_on is None:
            continue  # a duplicate name (reported elsewhere) or a broken list
        edges[node.name] = _edges(node, known, out)
        where[node.name] = node.path + "/depends_on"
    order = list(edges)
    for component in _cycles(edges):
        start = min(component, key=order.index)
        loop = _shortest_loop(start, component, edges)
        out.add(
            where[start],
            f"dependency cycle: {' -> '.join(loop)}; remove one of these dependencies",
        )


def _edges(node: _Node, known: set[str], out: ProblemList) -> list[str]:
    result: list[str] = []
    for dep, path in node.depends_on or []:
        if dep == node.name:
            out.add(path, f"'{dep}' depends on itself")
        elif dep in result:
            out.add(path, f"'{dep}' is listed twice")
        elif dep not in known:
            out.add(
                path,
                f"'{dep}' is not a node group or instance of this cluster{suggest(dep, known)}",
            )
        else:
            result.append(dep)
    return result


def _cycles(edges: dict[str, list[str]]) -> list[set[str]]:
    """Strongly connected components with more than one member (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            succ = edges.get(node, [])
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def _shortest_loop(start: str, component: set[str], edges: dict[str, list[str]]) -> list[str]:
    """The shortest path from `start` back to itself inside its component."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in edges.get(node, []):
            if nxt not in component:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return [start, start]

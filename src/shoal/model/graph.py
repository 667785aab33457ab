"""Finding a loop in a dependency graph: shared by document validation and the resolver.

Kept apart from both so the resolver (`planning/software.py`) and the checks of a document
(`documents/software_checks.py`) name a cycle the same way: the path around it, first name repeated.
It sits with the model, below both, so planning need not import the document readers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def find_cycle(edges: Mapping[str, Sequence[str]]) -> tuple[str, ...] | None:
    """One dependency loop as a path whose first name is repeated at its end, or None.

    `edges[a]` lists what `a` depends on; names without an entry have no dependencies. The
    search starts from names in the mapping's order, so the answer is deterministic.
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for root in edges:
        if root in state:
            continue
        path: list[str] = [root]
        iters = [iter(edges.get(root, ()))]
        state[root] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return (*path[path.index(nxt) :], nxt)
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(edges.get(nxt, ())))
    return None

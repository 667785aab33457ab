"""A joining node's name in the cluster it joins.

Senlin's node names need not be unique: a standalone node may share its cluster's name
(python-senlinclient's functional suite names a cluster and the node it adds alike). A Shoal
cluster's members are told apart by name, and the façade's node group is named after its
cluster, so a joining node whose name is taken there becomes an instance named
`<name>-node-<first 8 of its id>`; it takes its own name back when it leaves. Senlin's clients
still see, and find, it by its own name (`known_name`).
"""

from __future__ import annotations

from collections.abc import Collection

from shoal.store.records import NodeRecord

JOINED = "-node-"


def _suffix(n: NodeRecord) -> str:
    return f"{JOINED}{n.id[:8]}"


def member_name(n: NodeRecord, taken: Collection[str]) -> str | None:
    """The name `n` takes as a member: its own when free, else its own with its id's suffix;
    None when both are taken."""
    if n.name not in taken:
        return n.name
    renamed = n.name + _suffix(n)
    return None if renamed in taken else renamed


def known_name(n: NodeRecord) -> str:
    """The name Senlin's clients know `n` by: its own, whatever it is called as a member."""
    suffix = _suffix(n)
    if n.name.endswith(suffix) and len(n.name) > len(suffix):
        return n.name[: -len(suffix)]
    return n.name


def joined_pattern(ref: str) -> str:
    """The start of the member names a node known as `ref` may have (`known_name`'s inverse)."""
    return ref + JOINED

"""What the network readers share: addresses and ranges as typed values, bounded lists, and
the cluster's servers that a rule, a port or a pool may name.

`Servers` is built from the cluster's draft, so a rule over `web` is checked against the node
groups and instances the same document declares, and one broken profile does not turn into a
second problem here (members whose kind is unknown pass).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_network

from shoal.documents.collect import ProblemList
from shoal.documents.drafts import ClusterDraft
from shoal.documents.fields import Fields
from shoal.documents.names import listing, suggest
from shoal.documents.tree import describe, is_list
from shoal.model.members import MemberRef
from shoal.model.networks import IpAddress, IpNetwork
from shoal.model.profile import ServerProfile
from shoal.model.workloads import Container

_NODE = re.compile(r"(.+)-([1-9][0-9]*)")


def address(
    value: object, path: str, out: ProblemList, what: str = "an IP address"
) -> IpAddress | None:
    if not isinstance(value, str):
        out.add(path, f"expected {what}, found {describe(value)}")
        return None
    try:
        return ip_address(value.strip())
    except ValueError:
        out.add(path, f"{describe(value)} is not {what} (e.g. 10.0.0.5 or fd00::5)")
        return None


def cidr(value: object, path: str, out: ProblemList) -> IpNetwork | None:
    """An address range such as 10.0.0.0/24; host bits set is refused with the fix named."""
    if not isinstance(value, str):
        out.add(path, f"expected an address range such as 10.0.0.0/24, found {describe(value)}")
        return None
    text = value.strip()
    if "/" not in text:
        out.add(path, f"{describe(value)} has no prefix length; write it as e.g. {text}/24")
        return None
    try:
        return ip_network(text)
    except ValueError:
        pass
    try:
        loose = ip_network(text, strict=False)
    except ValueError:
        out.add(path, f"{describe(value)} is not an address range such as 10.0.0.0/24")
        return None
    out.add(path, f"{describe(value)} has host bits set; the range is {loose}")
    return None


def bounded(f: Fields, key: str, what: str, limit: int) -> list[tuple[object, str]]:
    """The elements of a list field, or [] (with a problem) when there are more than `limit`:
    counted before any element is read."""
    items = f.items(key, what=what)
    if len(items) > limit:
        f.problem(key, f"at most {limit} {what} per cluster, found {len(items)}")
        return []
    return items


def text_list(f: Fields, key: str, what: str, limit: int) -> list[tuple[str, str]] | None:
    raw = f.raw(key)
    if raw is not None and is_list(raw) and len(raw) > limit:
        f.problem(key, f"at most {limit} {what}s, found {len(raw)}")
        return None
    return f.names(key, what=what)


@dataclass(frozen=True, slots=True)
class WorkloadPorts:
    """What a pool over a workload needs of it: the port its members are reached on (its first
    named container port, else its first: engine/workload_members.py) and every port it binds."""

    member_port: int | None
    ports: frozenset[int]

    @classmethod
    def of(cls, containers: Iterable[Container]) -> WorkloadPorts:
        ports = [p for c in containers for p in c.ports]
        named = [p for p in ports if p.name]
        chosen = named[0] if named else (ports[0] if ports else None)
        return cls(None if chosen is None else chosen.port, frozenset(p.port for p in ports))


@dataclass(slots=True)
class Servers:
    """The cluster's members by name, with which of them (or which parts) are servers."""

    instances: dict[str, bool | None] = field(default_factory=dict)
    """instance -> is a server (None: its profile was broken)."""
    groups: dict[str, dict[str | None, bool | None]] = field(default_factory=dict)
    """node group -> part (None for a single-profile group) -> is a server."""
    counts: dict[str, int | None] = field(default_factory=dict)
    workloads: dict[str, WorkloadPorts] = field(default_factory=dict)
    """workload -> its ports: a pool may name a workload (its ready replicas serve)."""

    @classmethod
    def of(cls, draft: ClusterDraft | None) -> Servers:
        s = cls()
        if draft is None:
            return s
        for i in draft.instances:
            if i.name is not None:
                s.instances[i.name] = (
                    None if i.profile is None else isinstance(i.profile, ServerProfile)
                )
        for g in draft.groups:
            if g.name is None:
                continue
            s.groups[g.name] = {
                p.part: (None if p.profile is None else isinstance(p.profile, ServerProfile))
                for p in g.parts or ()
            }
            s.counts[g.name] = g.count
        return s

    def member(self, text: str, path: str, out: ProblemList, role: str) -> MemberRef | None:
        """A node group, instance or group/part whose servers `role` names; else a problem."""
        ref = MemberRef.parse(text)
        if ref.target in self.instances and ref.part is None:
            kind = self.instances[ref.target]
        elif ref.target in self.groups:
            parts = self.groups[ref.target]
            if ref.part is None and None not in parts and parts:
                kinds = [k for k in parts.values() if k is not None]
                kind = None if not kinds else any(kinds)
            elif ref.part in parts:
                kind = parts[ref.part]
            elif not parts:  # the group's profile was broken: already reported
                return None
            else:
                named = listing(p for p in parts if p is not None) if None not in parts else ""
                hint = f"; its parts: {named}" if named else "; it has no parts"
                out.add(path, f"node group {ref.target} has no part '{ref.part}'{hint}")
                return None
        else:
            names = [*self.instances, *self.groups]
            out.add(
                path,
                f"{role} names '{text}', which is no node group or instance of this "
                f"cluster{suggest(ref.target, names)}",
            )
            return None
        if kind is False:
            out.add(path, f"'{text}' is a volume; {role} names servers")
            return None
        return ref

    def server(self, text: str, path: str, out: ProblemList) -> bool:
        """An instance, or a node such as web-2 of a node group of at least 2 replicas."""
        if text in self.instances:
            if self.instances[text] is False:
                out.add(path, f"'{text}' is a volume, not a server")
                return False
            return True
        m = _NODE.fullmatch(text)
        if m is not None and m.group(1) in self.groups:
            count = self.counts.get(m.group(1))
            if count is not None and int(m.group(2)) > count:
                out.add(
                    path,
                    f"node group {m.group(1)} has {count} replicas, so there is no {text}",
                )
                return False
            return True
        out.add(
            path,
            f"'{text}' is no instance or node (such as web-1) of this cluster"
            f"{suggest(text, list(self.instances))}",
        )
        return False

"""Reading `security_groups`: rules by protocol, port range and source.

A rule's source is a CIDR, another security group of the cluster, or a node group/instance of
the cluster (`{member: web}`), whose servers' addresses the provider fills in and keeps current.
Group names are checked after every group has been read, so a rule may name a group declared
further down.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from shoal.documents.collect import ProblemList
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import suggest
from shoal.documents.net_common import Servers, bounded, cidr
from shoal.documents.tree import describe, is_int, is_mapping
from shoal.model.networks import (
    LIMITS,
    CidrSource,
    Direction,
    GroupSource,
    MemberSource,
    Protocol,
    RuleSource,
    SecurityGroup,
    SecurityRule,
)

_RANGE = re.compile(r"\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?")

_Pending = tuple[str, str]
"""A group name a rule references, with its pointer."""


@dataclass(slots=True)
class _Rule:
    rule: SecurityRule | None
    refs: list[_Pending]


def read_security_groups(
    f: Fields, servers: Servers
) -> tuple[tuple[SecurityGroup, ...], Callable[[set[str]], None]]:
    """The groups read, and the check of group references to run once all names are known."""
    groups: list[SecurityGroup] = []
    refs: list[_Pending] = []
    for value, path in bounded(f, "security_groups", "security groups", LIMITS.security_groups):
        g = mapping(value, path, f.out, "a security group")
        if g is None:
            continue
        name = g.name("name", required="name the security group")
        description = g.text("description") or ""
        rules: list[SecurityRule] = []
        ok = name is not None
        for rv, rpath in bounded(g, "rules", "rules", LIMITS.rules_per_group):
            r = _rule(rv, rpath, f.out, servers)
            refs.extend(r.refs)
            if r.rule is None:
                ok = False
            else:
                rules.append(r.rule)
        g.finish()
        if ok and name is not None:
            groups.append(SecurityGroup(name, tuple(rules), description))

    def check(known: set[str]) -> None:
        for text, where in refs:
            if text not in known:
                f.out.add(
                    where,
                    f"no security group '{text}' in this cluster{suggest(text, sorted(known))}",
                )

    return tuple(groups), check


def _rule(value: object, path: str, out: ProblemList, servers: Servers) -> _Rule:
    r = mapping(value, path, out, "a rule")
    if r is None:
        return _Rule(None, [])
    before = len(out)
    protocol = r.choice("protocol", Protocol, default=Protocol.TCP)
    direction = r.choice("direction", Direction, default=Direction.INGRESS)
    low, high = _ports(r, protocol)
    refs: list[_Pending] = []
    source = _source(r, servers, refs)
    r.finish()
    if len(out) != before or protocol is None or direction is None:
        return _Rule(None, refs)
    return _Rule(SecurityRule(protocol, low, high, source, direction), refs)


def _ports(r: Fields, protocol: Protocol | None) -> tuple[int | None, int | None]:
    raw = r.raw("ports")
    if raw is None:
        return None, None
    if protocol is not None and not protocol.has_ports:
        r.problem("ports", f"a {protocol} rule has no ports; drop 'ports' or use tcp or udp")
        return None, None
    low: int | None
    high: int | None
    if is_int(raw):
        low = high = raw
    elif isinstance(raw, str) and (m := _RANGE.fullmatch(raw)):
        low = int(m.group(1))
        high = int(m.group(2)) if m.group(2) else low
    else:
        r.problem("ports", f"expected a port or a range such as 8000-8100, found {describe(raw)}")
        return None, None
    for p in (low, high):
        if not 1 <= p <= 65535:
            r.problem("ports", f"ports are 1 to 65535, found {p}")
            return None, None
    if low > high:
        r.problem("ports", f"the range {low}-{high} is backwards; write {high}-{low}")
        return None, None
    return low, high


def _source(r: Fields, servers: Servers, refs: list[_Pending]) -> RuleSource | None:
    raw = r.raw("from")
    where = r.at("from")
    if raw is None:
        return None
    if isinstance(raw, str):
        net = cidr(raw, where, r.out)
        return CidrSource(net) if net is not None else None
    if not is_mapping(raw):
        r.problem(
            "from",
            "expected a range such as 10.0.0.0/8, or one of {cidr: ...}, {group: ...}, "
            f"{{member: ...}}, found {describe(raw)}",
        )
        return None
    s = Fields(raw, where, r.out)
    given = [k for k in ("cidr", "group", "member") if s.has(k)]
    if len(given) != 1:
        r.out.add(
            where,
            "give exactly one of cidr (an address range), group (a security group) or member "
            "(a node group or instance of this cluster)",
        )
        s.finish()
        return None
    kind = given[0]
    result: RuleSource | None = None
    if kind == "cidr":
        net = cidr(s.raw("cidr"), s.at("cidr"), r.out)
        result = CidrSource(net) if net is not None else None
    elif kind == "group":
        name = s.name("group")
        if name is not None:
            refs.append((name, s.at("group")))
            result = GroupSource(name)
    else:
        text = s.text("member", empty_ok=False)
        if text is not None:
            ref = servers.member(text, s.at("member"), r.out, "the rule")
            result = MemberSource(ref) if ref is not None else None
    s.finish()
    return result

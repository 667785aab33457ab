"""`{members: WORKLOAD}` (issue 22, item 1): what a workload's members are to those who read
them — the replicas that read READY, each as its server's address and the workload's port.

Its own module because three readers need it: cluster outputs (`service/queries.py` lists the
ready replicas beside the servers), the software deployer (`engine/software/decide.py`
hands these facts to the resolver beside the servers', so a deployment whose inputs name a
workload's members gets a new digest, and is run again on its servers, when the ready set
changes, exactly as a node group's members moving does), and the workload keeper
(`engine/workloads.py`: a workload whose env names members rolls a new revision when their
value changes). Both may run in different engines, so the facts come from the stored replica
rows, never from one loop's memory.

A member's address is `ADDRESS:PORT` with the workload's first named container port (its
first port when none is named), the bare address when it binds none: containers use their
server's network, so that is where a dependent reaches it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from shoal.model.members import MemberRef
from shoal.model.outputs import JoinedText, ListValue, MapValue, OutputValue, TextTemplate
from shoal.model.software import (
    Deployment,
    InputSource,
    MemberFactsInput,
    NodeFacts,
)
from shoal.model.workloads import Workload
from shoal.store.workloads import ReplicaRow


class NodePlace(Protocol):
    """What a replica's facts take from its server (a node row or the deployer's `Server`)."""

    @property
    def address(self) -> str | None: ...
    @property
    def zone(self) -> str | None: ...
    @property
    def host(self) -> str | None: ...


def member_port(w: Workload) -> int | None:
    """The port a member's address names: the first named port, else the first port."""
    ports = [p for c in w.containers for p in c.ports]
    named = [p for p in ports if p.name]
    chosen = named[0] if named else (ports[0] if ports else None)
    return None if chosen is None else chosen.port


def replica_address(address: str | None, port: int | None) -> str | None:
    if address is None:
        return None
    return address if port is None else f"{address}:{port}"


def _index(w: Workload, replica: str) -> int | None:
    tail = replica[len(w.name) + 1 :]
    return int(tail) if tail.isdigit() else None


def replica_facts(
    workloads: Iterable[Workload],
    rows: Iterable[ReplicaRow],
    servers: Mapping[str, NodePlace],
    *,
    live: set[str] | None = None,
) -> list[NodeFacts]:
    """Each replica of these workloads as a member fact: active when its row reads ready and
    its server is known (and live, when `live` names the live servers). Surge replicas of a
    rolling update count too: they serve the new revision once ready."""
    by_name = {w.name: w for w in workloads}
    found: list[NodeFacts] = []
    for row in rows:
        w = by_name.get(row.workload)
        if w is None:
            continue
        server = servers.get(row.node)
        up = server is not None and (live is None or row.node in live)
        found.append(
            NodeFacts(
                name=row.replica,
                member=MemberRef(w.name),
                index=_index(w, row.replica),
                address=replica_address(server.address if server else None, member_port(w)),
                zone=server.zone if server else None,
                host=server.host if server else None,
                active=row.ready and up,
            )
        )
    return found


def named_targets(sources: Iterable[InputSource]) -> set[str]:
    """The members these input sources read (`{members: X}`)."""
    return {s.member.target for s in sources if isinstance(s, MemberFactsInput)}


def workloads_read(deployments: Sequence[Deployment], workloads: Iterable[Workload]) -> list[str]:
    """The workloads whose members some deployment's inputs read."""
    names = {w.name for w in workloads}
    wanted: set[str] = set()
    for d in deployments:
        wanted |= named_targets(d.inputs.values()) & names
    return sorted(wanted)


def output_targets(values: Iterable[OutputValue]) -> set[str]:
    """The members cluster outputs read as lists (`{members: X}`), however deep."""
    found: set[str] = set()
    todo = list(values)
    while todo:
        v = todo.pop()
        match v:
            case MemberFactsInput(member, _):
                found.add(member.target)
            case TextTemplate(_, params) | MapValue(params):
                todo.extend(params.values())
            case JoinedText(_, items) | ListValue(items):
                todo.extend(items)
            case _:
                pass
    return found


def env_members(w: Workload) -> list[tuple[str, MemberFactsInput]]:
    """(variable, source) of each env value of `w` that reads members, in container order.
    A workload reading its own members is left out: its own readiness moving (as each batch of
    its rollout does) would otherwise roll it again, for ever."""
    found: list[tuple[str, MemberFactsInput]] = []
    for c in w.containers:
        for name, source in c.env.items():
            if isinstance(source, MemberFactsInput) and source.member.target != w.name:
                found.append((f"{c.name}.{name}", source))
    return found


def rendered_salt(
    w: Workload, facts: Mapping[str, Sequence[NodeFacts]]
) -> tuple[str, tuple[str, ...]]:
    """A digest of the values `w`'s env reads from members (the active members' facts, in name
    order), "" when it reads none; and the members it read. `facts` holds every member's
    facts by target name (node groups and workloads)."""
    reads = env_members(w)
    if not reads:
        return "", ()
    values = {
        var: [
            f.fact(src.fact)
            for f in facts.get(src.member.target, ())
            if f.active and (src.member.part is None or f.member.part == src.member.part)
        ]
        for var, src in reads
    }
    text = json.dumps(values, sort_keys=True)
    names = tuple(sorted({src.member.target for _, src in reads}))
    return hashlib.sha256(text.encode()).hexdigest()[:16], names

"""A cluster's outputs: named values built from the cluster as it is now, served when asked.

Heat templates end with `outputs` (a server's address, a URL built around it, a deployment's
result); Shoal keeps them with the cluster as expressions over the same typed sources software
inputs use (`model/software.py`), so `shoal describe cluster` evaluates them against the live
nodes and deployment records and a scale-out shows up on the next read. The expressions are
the contract between the document readers (`documents/outputs.py`,
`documents/hot/outputs.py`) and the pure evaluation (`planning/outputs.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TypeAlias

from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.software import (
    InputSource,
    Json,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    OutputInput,
    SoftwareSpec,
)

# Defined with the inputs (deployments take them too); re-exported where outputs name them.
from shoal.model.software import NetAttr as NetAttr
from shoal.model.software import NetworkFact as NetworkFact

MAX_OUTPUT_CHARS = 1 << 20
"""An output's value, as JSON, at most: the document check (`documents/output_size.py`) and the
evaluator (`planning/outputs.py`) apply the same bound."""


@dataclass(frozen=True, slots=True)
class MemberFact:
    """A fact of a member that has one node (an instance, a group of one): a single value."""

    member: MemberRef
    fact: NodeFact


_NET_WORDS = {
    NetAttr.PORT_ADDRESS: "port",
    NetAttr.FLOATING_IP_ADDRESS: "floating IP",
    NetAttr.VIP_ADDRESS: "load balancer",
}


def declared_address(net: NetworkSpec, fact: NetworkFact) -> str | None:
    """The address the document gives `fact`'s port, floating IP or balancer; None when the
    cloud assigns it. `UnknownNetworkResource` when the cluster has no such one."""
    given: object
    if fact.attr is NetAttr.PORT_ADDRESS:
        port = next((p for p in net.ports if p.name == fact.name), None)
        found, given = port is not None, port.fixed_ip if port is not None else None
    elif fact.attr is NetAttr.FLOATING_IP_ADDRESS:
        fip = next((f for f in net.floating_ips if f.name == fact.name), None)
        found, given = fip is not None, fip.address if fip is not None else None
    else:
        lb = next((b for b in net.load_balancers if b.name == fact.name), None)
        found, given = lb is not None, lb.vip_address if lb is not None else None
    if not found:
        raise UnknownNetworkResource(f"the cluster has no {_NET_WORDS[fact.attr]} {fact.name}")
    return None if given is None else str(given)


def given_addresses(software: SoftwareSpec, net: NetworkSpec) -> SoftwareSpec:
    """`software` with every deployment input naming an address the document gives (a port's
    `fixed_ip`, a floating IP's `address`, a balancer's `vip`) made that literal: known before
    anything exists. Inputs the cloud assigns stay `NetworkFact`s, resolved from the recorded
    addresses (planning/software.py); an unknown name is left for the document checks."""
    changed = False
    deployments = []
    for d in software.deployments:
        inputs: dict[str, InputSource] = {}
        for key, source in d.inputs.items():
            if isinstance(source, NetworkFact):
                try:
                    given = declared_address(net, source)
                except UnknownNetworkResource:
                    given = None
                if given is not None:
                    inputs[key] = LiteralInput(given)
                    changed = True
                    continue
            inputs[key] = source
        deployments.append(replace(d, inputs=inputs))
    return replace(software, deployments=tuple(deployments)) if changed else software


def assigned_words(fact: NetworkFact) -> str:
    return f"the address of {_NET_WORDS[fact.attr]} {fact.name} is assigned by the cloud"


class UnknownNetworkResource(Exception):
    """A `NetworkFact` names a port, floating IP or balancer the cluster does not have."""


@dataclass(frozen=True, slots=True)
class TextTemplate:
    """`str_replace`: each key of `params` in `template` replaced by its value's text."""

    template: str
    params: Mapping[str, OutputValue] = field(hash=False)


@dataclass(frozen=True, slots=True)
class JoinedText:
    """`list_join`: the items' texts joined by `separator`; an item that is a list gives all of
    its elements (so a group's addresses join into one text)."""

    separator: str
    items: tuple[OutputValue, ...]


@dataclass(frozen=True, slots=True)
class ListValue:
    """A list some of whose items come from the cluster."""

    items: tuple[OutputValue, ...]


@dataclass(frozen=True, slots=True)
class MapValue:
    """A mapping some of whose values come from the cluster."""

    items: Mapping[str, OutputValue] = field(hash=False)


OutputValue: TypeAlias = (
    LiteralInput
    | MemberFactsInput
    | MemberFact
    | NetworkFact
    | OutputInput
    | TextTemplate
    | JoinedText
    | ListValue
    | MapValue
)


@dataclass(frozen=True, slots=True)
class ClusterOutput:
    name: str
    value: OutputValue
    description: str = ""


class OutputStatus(StrEnum):
    READY = "ready"
    PENDING = "pending"
    """Not known yet (a node not active, a deployment not complete): the value is null."""


@dataclass(frozen=True, slots=True)
class OutputResult:
    """One output evaluated against the cluster as it is now."""

    name: str
    description: str
    status: OutputStatus
    value: Json
    reason: str | None = None
    """Why it is pending, in words (the first reason found)."""

"""A cluster's outputs evaluated against its nodes and deployment records as they are now.

Pure: the service gives the current servers (as `NodeFacts`) and the deployment records, and
gets each output's value, or `pending` with the first reason it is not known yet (a node not
active or without an address, a deployment not complete on a node). Nothing here fails on the
state of the cluster: an output that cannot be known is pending, never an error. Lists follow
node-name order (`web-2` before `web-10`), as deployment inputs do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.outputs import (
    MAX_OUTPUT_CHARS,
    ClusterOutput,
    JoinedText,
    ListValue,
    MapValue,
    MemberFact,
    NetworkFact,
    OutputResult,
    OutputStatus,
    OutputValue,
    TextTemplate,
    UnknownNetworkResource,
    assigned_words,
    declared_address,
)
from shoal.model.software import (
    DeploymentRecord,
    DeploymentStatus,
    Json,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFacts,
    OutputInput,
    OutputScope,
    SoftwareSpec,
)
from shoal.model.textreplace import OverBudget, replace_all, replaced
from shoal.planning.software import targets

__all__ = ["MAX_RESULT_CHARS", "evaluate", "replace_all"]

MAX_RESULT_CHARS = MAX_OUTPUT_CHARS
"""An output's value, as JSON, at most (a join over a huge group would otherwise grow)."""
MAX_WORK_CHARS = 4 * MAX_RESULT_CHARS
"""Characters one output's evaluation may make in all, parts included: counted before each
text is built, so an output that would expand is `pending`, never a server out of memory."""


class _Pending(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def evaluate(
    outputs: Sequence[ClusterOutput],
    software: SoftwareSpec,
    nodes: Sequence[NodeFacts],
    records: Sequence[DeploymentRecord],
    networking: NetworkSpec | None = None,
    assigned: Mapping[NetworkFact, str] | None = None,
) -> list[OutputResult]:
    """`assigned`: the addresses the cloud gave the cluster's ports, floating IPs and
    balancers whose document gives none, as recorded (store/network_addresses.py)."""
    ev = _Evaluation(software, nodes, records, networking or NetworkSpec(), assigned or {})
    results = []
    for o in outputs:
        ev.left = MAX_WORK_CHARS
        try:
            value = ev.value(o.value)
        except _Pending as p:
            results.append(
                OutputResult(o.name, o.description, OutputStatus.PENDING, None, p.reason)
            )
            continue
        if len(json.dumps(value)) > MAX_RESULT_CHARS:
            results.append(
                OutputResult(
                    o.name,
                    o.description,
                    OutputStatus.PENDING,
                    None,
                    f"the value is longer than {MAX_RESULT_CHARS} characters",
                )
            )
            continue
        results.append(OutputResult(o.name, o.description, OutputStatus.READY, value))
    return results


class _Evaluation:
    def __init__(
        self,
        software: SoftwareSpec,
        nodes: Sequence[NodeFacts],
        records: Sequence[DeploymentRecord],
        networking: NetworkSpec,
        assigned: Mapping[NetworkFact, str],
    ) -> None:
        self.networking = networking
        self.assigned = assigned
        self.software = software
        self.nodes = nodes
        self.records = {(r.deployment, r.node): r for r in records}
        self.left = MAX_WORK_CHARS

    def _charge(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise _Pending(f"the value is longer than {MAX_RESULT_CHARS} characters")

    def _sized(self, value: Json) -> Json:
        if isinstance(value, str):
            self._charge(len(value))
        elif isinstance(value, list | dict):
            self._charge(len(json.dumps(value)))
        return value

    def value(self, v: OutputValue) -> Json:
        match v:
            case LiteralInput(value):
                return self._sized(value)
            case MemberFactsInput(member, fact):
                return [self._sized(self._fact(n, fact)) for n in targets(member, self.nodes)]
            case MemberFact(member, fact):
                return self._fact(self._one(member), fact)
            case NetworkFact() as fact:
                return self._address(fact)
            case OutputInput(deployment, output, scope):
                return self._sized(self._output(deployment, output, scope))
            case TextTemplate(template, params):
                texts = {k: _text(self.value(p)) for k, p in params.items()}
                try:
                    text, _ = replaced(template, texts, max_chars=max(self.left, 0))
                except OverBudget:
                    raise _Pending(
                        f"the value is longer than {MAX_RESULT_CHARS} characters"
                    ) from None
                self._charge(len(text))
                return text
            case JoinedText(separator, items):
                texts_: list[str] = []
                for item in items:
                    got = self.value(item)
                    texts_ += [_text(x) for x in got] if isinstance(got, list) else [_text(got)]
                self._charge(sum(map(len, texts_)) + len(separator) * len(texts_))
                return separator.join(texts_)
            case ListValue(items):
                return [self.value(i) for i in items]
            case MapValue(items):
                return {k: self.value(i) for k, i in items.items()}

    def _address(self, fact: NetworkFact) -> Json:
        """The address the document gives the port, floating IP or balancer, else the one the
        cloud assigned once recorded; pending until then (docs/networks.md)."""
        try:
            given = declared_address(self.networking, fact)
        except UnknownNetworkResource as e:
            raise _Pending(str(e)) from None
        if given is None:
            given = self.assigned.get(fact)
        if given is None:
            raise _Pending(assigned_words(fact))
        return given

    def _one(self, member: MemberRef) -> NodeFacts:
        found = targets(member, self.nodes)
        if not found:
            raise _Pending(f"{member} has no node yet")
        if len(found) > 1:
            raise _Pending(f"{member} has {len(found)} nodes, not one; list them with 'members'")
        return found[0]

    @staticmethod
    def _fact(node: NodeFacts, fact: NodeFact) -> Json:
        if not node.active:
            raise _Pending(f"node {node.name} is not active yet")
        value = node.fact(fact)
        if value is None and fact is not NodeFact.INDEX:
            raise _Pending(f"node {node.name} has no {fact.value} yet")
        return value

    def _output(self, deployment: str, output: str, scope: OutputScope) -> Json:
        d = self.software.deployment(deployment)
        if d is None:
            raise _Pending(f"the cluster has no deployment {deployment}")
        on = targets(d.target, self.nodes)
        if scope is OutputScope.NODE and len(on) != 1:
            raise _Pending(
                f"deployment {deployment} runs on {len(on)} nodes, not one; "
                "take its output 'from: all'"
            )
        values: list[Json] = []
        for n in on:
            r = self.records.get((deployment, n.name))
            if r is None or r.status is not DeploymentStatus.COMPLETE:
                state = "not started" if r is None else str(r.status)
                raise _Pending(f"deployment {deployment} is not complete on {n.name} ({state})")
            values.append(r.outputs.get(output))
        return values[0] if scope is OutputScope.NODE else values


def _text(value: Json) -> str:
    """A value's text as Heat's str_replace and list_join give it: JSON for lists and maps."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"))

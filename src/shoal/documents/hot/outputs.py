"""A template's `outputs` onto the cluster's outputs (`model/outputs.py`), served live.

Two steps. While the top template is read (`partial`), each output's value is evaluated with
the functions that build text around run-time values kept as structure: `str_replace` (and
its strict forms) → a text template, `list_join` / `Fn::Join` → a join, lists and mappings
walked; everything else is evaluated as usual, so a `get_attr` stays an `Attr` and a
`get_param` becomes its value. After the cluster is assembled and the software mapped
(`map_outputs`), each symbolic part is named in the cluster's terms:

- `get_attr: [S, first_address | accessIPv4 | name]` of a server → that fact of its node
  (`networks, NET, 0` and `networks, NET` → its address, alone or as a list);
  `get_resource: S` → its node's name;
- `get_attr: [G, attributes, ATTR]` (or `[G, ATTR]`) of a ResourceGroup, `[G, refs]` → the list
  over the group's nodes, in name order;
- `get_attr: [D, OUTPUT]` of a deployment → its output (a deployment group's: the list over
  its nodes; `deploy_stdouts` and the other plurals likewise); of a deployment group over a map
  of this template's servers (one deployment per server) → Heat's map, server key → output;
- `get_attr: [PORT, fixed_ips, 0, ip_address]`, `[FIP, floating_ip_address]`,
  `[LB, vip_address]` of a port, floating IP or Octavia balancer the cluster's networking holds
  (netmap.py) → that address (`NetworkFact`).

What cannot be mapped (another resource's attribute, a value computed at run time, a hidden
parameter) is one notice per output, counted by reason (`Report.skip`); the output is left out
and the template still makes its cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import child
from shoal.documents.drafts import ClusterDraft
from shoal.documents.hot.assemble import Placed
from shoal.documents.hot.evaluator import BROKEN, MAX_DEPTH, Evaluator, call_of
from shoal.documents.hot.netattrs import net_attr, owned
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import Shape
from shoal.documents.hot.through import Inside, NotRead, follow
from shoal.documents.hot.values import Attr, Ref, Unknown, first_symbolic
from shoal.documents.output_size import member_counts, too_big
from shoal.documents.params import to_json
from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.outputs import (
    ClusterOutput,
    JoinedText,
    ListValue,
    MapValue,
    MemberFact,
    NetAttr,
    OutputValue,
    TextTemplate,
)
from shoal.model.software import (
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    OutputInput,
    OutputScope,
    SoftwareSpec,
)

_REPLACE = ("str_replace", "str_replace_strict", "str_replace_vstrict")
_FACTS = {
    "first_address": NodeFact.ADDRESS,
    "accessIPv4": NodeFact.ADDRESS,
    "name": NodeFact.NAME,
    "OS-EXT-AZ:availability_zone": NodeFact.ZONE,
    "OS-EXT-SRV-ATTR:host": NodeFact.HOST,
}
_PLURALS = {
    "deploy_stdouts": "deploy_stdout",
    "deploy_stderrs": "deploy_stderr",
    "deploy_status_codes": "deploy_status_code",
}


@dataclass(frozen=True, slots=True)
class HotTemplate:
    template: object
    params: dict[str, object]


@dataclass(frozen=True, slots=True)
class HotJoin:
    separator: object
    lists: list[object]


@dataclass(frozen=True, slots=True)
class Hidden:
    parameter: str


def partial(e: Evaluator, hidden: set[str], value: object, path: str, depth: int = 0) -> object:
    """`value` evaluated, text built around symbolic parts kept as `HotTemplate`/`HotJoin`."""
    if depth > MAX_DEPTH:
        return BROKEN  # the evaluation of the same value reported it
    found = call_of(value)
    if found is None:
        if isinstance(value, dict):
            return {
                k: partial(e, hidden, v, child(path, str(k)), depth + 1) for k, v in value.items()
            }
        if isinstance(value, list):
            return [partial(e, hidden, v, child(path, i), depth + 1) for i, v in enumerate(value)]
        return value
    name, args = found
    at = child(path, name)
    if name == "get_param":
        first = args[0] if isinstance(args, list) and args else args
        if isinstance(first, str) and first in hidden:
            return Hidden(first)
    if name in _REPLACE and isinstance(args, dict) and isinstance(args.get("params"), dict):
        params = args["params"]
        return HotTemplate(
            partial(e, hidden, args.get("template"), child(at, "template"), depth + 1),
            {
                str(k): partial(e, hidden, v, child(at, "params", str(k)), depth + 1)
                for k, v in params.items()
            },
        )
    if name == "list_join" and isinstance(args, list) and len(args) >= 2:
        return HotJoin(
            partial(e, hidden, args[0], child(at, 0), depth + 1),
            [partial(e, hidden, v, child(at, i + 1), depth + 1) for i, v in enumerate(args[1:])],
        )
    if name == "Fn::Join" and isinstance(args, list) and len(args) == 2:
        return HotJoin(
            partial(e, hidden, args[0], child(at, 0), depth + 1),
            [partial(e, hidden, args[1], child(at, 1), depth + 1)],
        )
    hidden_one = hidden_in(value, hidden)
    if hidden_one is not None:  # anywhere below another function: its value would show
        return Hidden(hidden_one)
    return e.ev(value, path)


def hidden_in(value: object, hidden: set[str], depth: int = 0) -> str | None:
    """The first hidden parameter a `get_param` below `value` names, or None (deeper than the
    evaluator goes, nothing is evaluated, so nothing can show)."""
    if depth > MAX_DEPTH or not hidden:
        return None
    found = call_of(value)
    if found is not None and found[0] == "get_param":
        args = found[1]
        first = args[0] if isinstance(args, list) and args else args
        if isinstance(first, str) and first in hidden:
            return first
    children: list[object] = []
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    for v in children:
        got = hidden_in(v, hidden, depth + 1)
        if got is not None:
            return got
    return None


MAX_OUTPUT_PARTS = 20_000
"""Parts (texts, lists, entries, facts) a template's outputs take from nested templates'
outputs, followed into them, in all: a chain of six nested templates each listing the inner
one's output twenty times would be 20**6 parts. (The top template's own parts are bounded by
its size and by MAX_OUTPUT_CHARS.)"""


class _TooBig(Exception):
    """The outputs, followed into nested templates, have more than MAX_OUTPUT_PARTS parts."""


class _Skip(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(slots=True)
class _Mapper:
    shape: Shape
    placed: Placed
    cluster: ClusterDraft
    software: SoftwareSpec | None
    networking: NetworkSpec | None = None
    parts: list[int] = field(default_factory=lambda: [MAX_OUTPUT_PARTS])
    """What is left of MAX_OUTPUT_PARTS (a list: shared with the mappers of nested shapes)."""
    followed: bool = False
    """Mapping a nested template's output (its parts count against MAX_OUTPUT_PARTS)."""

    def value(self, v: object) -> OutputValue:
        if self.followed:
            self.parts[0] -= 1
            if self.parts[0] < 0:
                raise _TooBig
        if isinstance(v, HotTemplate):
            if not isinstance(v.template, str):
                raise _Skip(
                    "str_replace of a template known only at run time in an output",
                    "the text of its str_replace is computed at run time",
                )
            return TextTemplate(v.template, {k: self.value(p) for k, p in v.params.items()})
        if isinstance(v, HotJoin):
            if not isinstance(v.separator, str):
                raise _Skip(
                    "list_join with a separator known only at run time in an output",
                    "the separator of its list_join is computed at run time",
                )
            return JoinedText(v.separator, tuple(self.value(i) for i in v.lists))
        if isinstance(v, Hidden):
            raise _Skip(
                "hidden parameter in an output",
                f"it shows hidden parameter '{v.parameter}'; Shoal serves outputs to everyone "
                "who may read the cluster",
            )
        if isinstance(v, Attr):
            return self.attr(v)
        if isinstance(v, Ref):
            return self.ref(v)
        if isinstance(v, Unknown):
            raise _Skip("output computed at run time", f"its value is {v.why}")
        if isinstance(v, list):
            items = [self.value(i) for i in v]
            if all(isinstance(i, LiteralInput) for i in items):
                return LiteralInput(
                    to_json([i.value for i in items if isinstance(i, LiteralInput)])
                )
            return ListValue(tuple(items))
        if isinstance(v, dict):
            entries = {str(k): self.value(i) for k, i in v.items()}
            if all(isinstance(i, LiteralInput) for i in entries.values()):
                return LiteralInput(
                    {k: i.value for k, i in entries.items() if isinstance(i, LiteralInput)}
                )
            return MapValue(entries)
        return LiteralInput(to_json(v))

    def _element(self, resource: str) -> MemberRef | None:
        elements = self.placed.elements.get((self.shape.scope, resource), [])
        if len(elements) != 1:
            return None
        name = elements[0]
        group = next((g for g in self.cluster.groups if g.name == name), None)
        if group is not None and any(p.part is not None for p in group.parts or []):
            return MemberRef(name, "server")
        return MemberRef(name)

    def _cannot(self, v: Attr) -> _Skip:
        kind = self.shape.kinds.get(v.name, "resource")
        words = ".".join([v.name, *map(str, v.path)])
        return _Skip(
            f"get_attr of {kind} in an output",
            f"get_attr {words} ({kind}) has no Shoal counterpart; Shoal serves a server's or "
            "group's address, name, zone or host, and a deployment's outputs",
        )

    def attr(self, v: Attr) -> OutputValue:
        inside = follow(self.shape, v)
        if isinstance(inside, NotRead):
            raise _Skip("output of a nested template Shoal does not read", inside.what)
        if inside.shape is not self.shape:
            return self._nested(v, inside)
        if v.scope != self.shape.scope:
            raise _Skip(
                "attribute of a nested template's resource in an output",
                f"it names {v.name} inside a nested template",
            )
        path = [str(p) for p in v.path]
        fanned = self._fanned(v.name)
        if fanned and len(path) == 1:
            output = _PLURALS.get(path[0], path[0])
            return MapValue(
                {key: OutputInput(name, output, OutputScope.NODE) for key, name in fanned}
            )
        if self.software is not None and self.software.deployment(v.name) is not None:
            if len(path) != 1:
                raise self._cannot(v)
            group = self.shape.kinds.get(v.name, "").endswith("Group")
            scope = OutputScope.ALL if group else OutputScope.NODE
            return OutputInput(v.name, _PLURALS.get(path[0], path[0]), scope)
        address = net_attr(self.shape.kinds.get(v.name, ""), path)
        if address is not None:
            return self._network(v, address)
        servers = {s.name for s in self.shape.servers}
        groups = {g.name for g in self.shape.groups}
        member = self._element(v.name) if v.name in servers | groups else None
        if member is None:
            raise self._cannot(v)
        if v.name in groups:
            rest = path[1:] if path[:1] == ["attributes"] else path
            if rest == ["refs"]:
                return MemberFactsInput(member, NodeFact.NAME)
            fact = _FACTS.get(rest[0]) if len(rest) == 1 else None
            if fact is None:
                raise self._cannot(v)
            return MemberFactsInput(member, fact)
        if path[:1] == ["networks"] and len(path) in (2, 3):
            if len(path) == 3 and path[2] != "0":
                raise _Skip(
                    "a server's second address in an output",
                    f"it takes address {path[2]} of {v.name} on {path[1]}; a Shoal node has one",
                )
            one = MemberFact(member, NodeFact.ADDRESS)
            return one if len(path) == 3 else ListValue((one,))
        fact = _FACTS.get(path[0]) if len(path) == 1 else None
        if fact is None:
            raise self._cannot(v)
        return MemberFact(member, fact)

    def _network(self, v: Attr, attr: NetAttr) -> OutputValue:
        """A port's, floating IP's or balancer's address, when the resource is the cluster's
        own (netmap.py maps it; one on a network the cluster does not own is left out)."""
        fact = owned(self.networking, attr, v.name)
        if fact is None:
            kind = self.shape.kinds.get(v.name, "resource")
            raise _Skip(
                f"get_attr of {kind} not in the cluster's networking in an output",
                f"{v.name} ({kind}) is not one of the cluster's own networking resources",
            )
        return fact

    def _nested(self, v: Attr, inside: Inside) -> OutputValue:
        """A nested template's output (TripleO's role outputs), served as its value is inside;
        the nested template's software is not the cluster's outputs' business."""
        if inside.output in inside.shape.hidden_outputs:
            raise _Skip(
                "hidden parameter in an output",
                f"{v.name}'s output '{inside.output}' shows a hidden parameter of its template",
            )
        inner = _Mapper(
            inside.shape, self.placed, self.cluster, None, parts=self.parts, followed=True
        )
        return inner.value(inside.value)

    def _fanned(self, name: str) -> list[tuple[str, str]]:
        """(server key, deployment) of a deployment group the software mapping split into one
        deployment per server of a map (`NAME-KEY`); empty for any other resource."""
        shape = next((s for s in self.shape.software if s.name == name), None)
        servers = shape.props.get("servers") if shape is not None else None
        if self.software is None or not isinstance(servers, dict) or len(servers) < 2:
            return []
        pairs = [(str(key), f"{name}-{key}") for key in servers]
        if all(self.software.deployment(d) is not None for _, d in pairs):
            return pairs
        return []

    def ref(self, v: Ref) -> OutputValue:
        member = self._element(v.name) if v.scope == self.shape.scope else None
        if member is None or v.name not in {s.name for s in self.shape.servers}:
            kind = self.shape.kinds.get(v.name, "resource")
            raise _Skip(
                f"get_resource of {kind} in an output",
                f"the id of {v.name} ({kind}) has no Shoal counterpart; a server's is its "
                "node's name",
            )
        return MemberFact(member, NodeFact.NAME)


def map_outputs(
    shape: Shape,
    placed: Placed,
    cluster: ClusterDraft,
    software: SoftwareSpec | None,
    report: Report,
    networking: NetworkSpec | None = None,
) -> tuple[ClusterOutput, ...]:
    m = _Mapper(shape, placed, cluster, software, networking)
    mapped: list[ClusterOutput] = []
    counts = member_counts(cluster)
    for o in shape.output_values:
        if first_symbolic(o.value) == BROKEN:
            continue  # its problem is reported already
        try:
            value = m.value(o.value)
            why = too_big(value, counts)
            if why is not None:
                report.problem(o.path, why)
                continue
            mapped.append(ClusterOutput(o.name, value, o.description))
        except _Skip as s:
            report.skip(
                s.reason,
                o.path,
                f"output '{o.name}' is not served from the cluster: {s.message}",
            )
        except _TooBig:
            report.problem(
                o.path,
                f"the outputs take more than {MAX_OUTPUT_PARTS} parts from the outputs of "
                "nested templates, followed into them",
            )
            break
    return tuple(mapped)

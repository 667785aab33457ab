"""The `outputs` section of a native document: values served from the live cluster.

    outputs:
      NAME:
        description: text                 # optional
        value: VALUE

    VALUE is any JSON value; inside it, a mapping of one of these forms comes from the cluster:

      {members: GROUP[/part], fact: address}    # that fact of every node, a list
      {member: INSTANCE[/part], fact: address}  # that fact of its one node, a single value
      {output: DEPLOYMENT.NAME, from: node|all} # a deployment's output (all: the list)
      {param: NAME}                             # a parameter's value (not a hidden one)
      {value: X}                                # X as written, even if it looks like a form
      {template: TEXT, params: {KEY: VALUE}}    # str_replace: each KEY in TEXT replaced
      {join: [VALUE, ...], with: TEXT}          # list_join: lists give all their items
      {network_address: NAME, of: port|floating_ip|load_balancer}
                                                # that one's address (docs/networks.md)

Outputs are read on their own (a broken one never hides the others) and checked against the
cluster and its deployments after everything is read (`check_outputs`). A hidden parameter is
refused: outputs are shown to anyone who may read the cluster. `outputs_document` writes them
back so a stored cluster round-trips.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name, suggest, unknown
from shoal.documents.output_size import member_counts, too_big
from shoal.documents.params import MAX_VALUE_DEPTH, ParameterTable, to_json
from shoal.documents.software import DeploymentDraft, SoftwareDraft
from shoal.documents.software_checks import HEAT_OUTPUTS
from shoal.documents.software_sources import read_source
from shoal.documents.tree import describe, is_list, is_mapping, pairs_of, quote
from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.outputs import (
    ClusterOutput,
    JoinedText,
    ListValue,
    MapValue,
    MemberFact,
    NetAttr,
    NetworkFact,
    OutputValue,
    TextTemplate,
)
from shoal.model.software import (
    Json,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    OutputInput,
    SecretInput,
)

MAX_OUTPUTS = 200
MAX_OUTPUT_PARTS = 1_000
"""Sources, templates, joins, list items and mapping entries in one output's value."""
MAX_TEMPLATE_BYTES = 64 * 1024
MAX_DESCRIPTION_BYTES = 4 * 1024

_SOURCE_FORMS = ("value", "param", "secret", "node", "members", "output")
_OWN_FORMS: dict[str, frozenset[str]] = {
    "member": frozenset({"member", "fact"}),
    "template": frozenset({"template", "params"}),
    "join": frozenset({"join", "with"}),
    "network_address": frozenset({"network_address", "of"}),
}
_NET_OF = {
    "port": NetAttr.PORT_ADDRESS,
    "floating_ip": NetAttr.FLOATING_IP_ADDRESS,
    "load_balancer": NetAttr.VIP_ADDRESS,
}


@dataclass(frozen=True, slots=True)
class Reference:
    """A member or deployment output named in an output, and where, for the checks."""

    kind: Literal["member", "output", "network"]
    """A member (a MemberRef's text), a deployment's output (DEPLOYMENT.OUTPUT) or a port,
    floating IP or load balancer (`port NAME`, `floating_ip NAME`, `load_balancer NAME`)."""
    ref: str
    path: str


@dataclass(slots=True)
class OutputDraft:
    name: str
    path: str
    value: OutputValue | None = None
    description: str = ""
    references: list[Reference] = field(default_factory=list)


def read_outputs(
    raw: object, path: str, params: ParameterTable, out: ProblemList
) -> list[OutputDraft]:
    if raw is None:
        return []
    section = mapping(raw, path, out, "'outputs' (a mapping of names to outputs)")
    if section is None:
        return []
    entries = section.entries()
    if len(entries) > MAX_OUTPUTS:
        out.add(path, f"at most {MAX_OUTPUTS} outputs, found {len(entries)}")
        return []
    drafts = []
    for name, body in entries:
        where = section.at(name)
        if not is_name(name):
            out.add(where, f"{quote(name)} is not a valid output name: {NAME_RULE}")
            continue
        draft = _output(name, body, where, params, out)
        if draft is not None:
            drafts.append(draft)
    return drafts


def _output(
    name: str, body: object, path: str, params: ParameterTable, out: ProblemList
) -> OutputDraft | None:
    f = mapping(body, path, out, "an output (a mapping with 'value')")
    if f is None:
        return None
    draft = OutputDraft(name, path)
    description = f.text("description")
    if description is not None:
        if len(description.encode()) > MAX_DESCRIPTION_BYTES:
            f.problem("description", f"at most {MAX_DESCRIPTION_BYTES} bytes of description")
        draft.description = description
    given = dict(f.entries())
    if "value" not in given:
        f.problem("value", "'value' is missing: give the output's value")
        f.finish()
        return None
    f.raw("value")
    f.finish()
    reader = _Reader(params, out, draft.references)
    before = len(out)
    value = reader.read(given["value"], f.at("value"), 0)
    if len(out) > before or value is None:
        return None
    draft.value = value
    return draft


class _Reader:
    def __init__(self, params: ParameterTable, out: ProblemList, refs: list[Reference]) -> None:
        self.params = params
        self.out = out
        self.refs = refs
        self.parts = 0

    def read(self, value: object, path: str, depth: int) -> OutputValue | None:
        self.parts += 1
        if self.parts == MAX_OUTPUT_PARTS + 1:
            self.out.add(path, f"an output's value has at most {MAX_OUTPUT_PARTS} parts")
        if self.parts > MAX_OUTPUT_PARTS:
            return None
        if depth > MAX_VALUE_DEPTH:
            self.out.add(path, f"the value nests deeper than {MAX_VALUE_DEPTH} levels")
            return None
        if is_list(value):
            read = [self.read(v, child(path, i), depth + 1) for i, v in enumerate(value)]
            if any(i is None for i in read):
                return None
            return _collapsed_list([i for i in read if i is not None])
        if not is_mapping(value):
            return LiteralInput(to_json(value))
        keys = {str(k) for k, _ in pairs_of(value)}
        own = next((k for k in _OWN_FORMS if k in keys), None)
        if own is not None:
            return self._own(own, value, path, depth)
        if any(k in keys for k in _SOURCE_FORMS):
            return self._source(value, path)
        items: dict[str, OutputValue] = {}
        for k, v in pairs_of(value):
            got = self.read(v, child(path, str(k)), depth + 1)
            if got is None:
                return None
            items[str(k)] = got
        return _collapsed_map(items)

    def _source(self, value: object, path: str) -> OutputValue | None:
        read = read_source(value, path, self.params, self.out)
        if read is None:
            return None
        match read.source:
            case LiteralInput() as lit:
                return lit
            case SecretInput(parameter):
                self.out.add(
                    read.ref_path,
                    f"parameter '{parameter}' is hidden; outputs are shown to everyone who "
                    "may read the cluster, so they cannot hold a hidden parameter",
                )
            case MemberFactsInput(member, _) as members:
                self.refs.append(Reference("member", str(member), read.ref_path))
                return members
            case OutputInput(deployment, output, _) as got:
                self.refs.append(Reference("output", f"{deployment}.{output}", read.ref_path))
                return got
            case _:
                self.out.add(
                    read.ref_path,
                    "an output is not evaluated on a node, so it has no 'node' fact; use "
                    "{member: NAME, fact: ...} or {members: GROUP, fact: ...}",
                )
        return None

    def _own(self, form: str, value: object, path: str, depth: int) -> OutputValue | None:
        f = Fields(value, path, self.out)
        extra = sorted(set(f.values) - _OWN_FORMS[form])
        if extra:
            f.problem(
                extra[0],
                f"'{extra[0]}' does not go with '{form}' in an output value; '{form}' takes "
                f"{', '.join(sorted(_OWN_FORMS[form]))}",
            )
            return None
        match form:
            case "member":
                return self._member(f)
            case "template":
                return self._template(f, depth)
            case "network_address":
                return self._network(f)
            case _:
                return self._join(f, depth)

    def _member(self, f: Fields) -> OutputValue | None:
        ref = f.text("member", required="name an instance (or GROUP/PART)", empty_ok=False)
        fact = _fact(f.raw("fact"), f.at("fact"), self.out) if f.has("fact") else NodeFact.ADDRESS
        if ref is None or fact is None:
            return None
        self.refs.append(Reference("member", ref, f.at("member")))
        return MemberFact(MemberRef.parse(ref), fact)

    def _network(self, f: Fields) -> OutputValue | None:
        name = f.text("network_address", required="name a port, floating IP or balancer")
        of = f.text("of", required=f"one of {', '.join(_NET_OF)}")
        if name is None or of is None:
            return None
        attr = _NET_OF.get(of)
        if attr is None:
            f.problem("of", f"{quote(of)} is not one of {', '.join(_NET_OF)}")
            return None
        self.refs.append(Reference("network", f"{of} {name}", f.at("network_address")))
        return NetworkFact(attr, name)

    def _template(self, f: Fields, depth: int) -> OutputValue | None:
        text = f.text("template", required="give the text to fill in")
        if text is None:
            return None
        if len(text.encode()) > MAX_TEMPLATE_BYTES:
            f.problem("template", f"at most {MAX_TEMPLATE_BYTES} bytes of template")
            return None
        raw = f.raw("params")
        params: dict[str, OutputValue] = {}
        if raw is not None:
            section = mapping(raw, f.at("params"), self.out, "'params' (text to replace: value)")
            if section is None:
                return None
            for key, v in section.entries():
                got = self.read(v, section.at(key), depth + 1)
                if got is None:
                    return None
                if not key:
                    self.out.add(section.at(key), "a key to replace must not be empty")
                    return None
                params[key] = got
        return TextTemplate(text, params)

    def _join(self, f: Fields, depth: int) -> OutputValue | None:
        raw = f.raw("join", required="list the values to join")
        separator = f.text("with") if f.has("with") else ""
        if raw is None or separator is None:
            return None
        if not is_list(raw):
            f.problem("join", f"expected a list of values to join, found {describe(raw)}")
            return None
        items = [self.read(v, child(f.at("join"), i), depth + 1) for i, v in enumerate(raw)]
        if any(i is None for i in items):
            return None
        return JoinedText(separator, tuple(i for i in items if i is not None))


def _fact(value: object, at: str, out: ProblemList) -> NodeFact | None:
    allowed = [f.value for f in NodeFact]
    if isinstance(value, str) and value in allowed:
        return NodeFact(value)
    hint = suggest(value, allowed) if isinstance(value, str) else ""
    out.add(at, f"unknown node fact {describe(value)}{hint}; choose one of {', '.join(allowed)}")
    return None


def _collapsed_list(items: list[OutputValue]) -> OutputValue:
    """A list of literals is one literal (so a written list and its export read the same)."""
    if all(isinstance(i, LiteralInput) for i in items):
        return LiteralInput([i.value for i in items if isinstance(i, LiteralInput)])
    return ListValue(tuple(items))


def _collapsed_map(items: dict[str, OutputValue]) -> OutputValue:
    if all(isinstance(v, LiteralInput) for v in items.values()):
        return LiteralInput({k: v.value for k, v in items.items() if isinstance(v, LiteralInput)})
    return MapValue(items)


# --- across the document ---------------------------------------------------------------------


def check_outputs(
    drafts: list[OutputDraft],
    cluster: ClusterDraft,
    software: SoftwareDraft | None,
    out: ProblemList,
    networking: NetworkSpec | None = None,
    workloads: frozenset[str] | set[str] = frozenset(),
) -> None:
    """Every member, deployment output and networking resource an output names exists.
    `{members: W}` may name a workload (its ready replicas' addresses, docs/workloads.md)."""
    net = networking or NetworkSpec()
    own: dict[str, set[str]] = {
        "port": {p.name for p in net.ports if p.name is not None},
        "floating_ip": {fip.name for fip in net.floating_ips},
        "load_balancer": {b.name for b in net.load_balancers},
    }
    members: dict[str, set[str | None]] = {}
    for g in cluster.groups:
        if g.name is not None:
            members[g.name] = {p.part for p in g.parts or []} or {None}
    for i in cluster.instances:
        if i.name is not None:
            members[i.name] = {None}
    for w in workloads:
        members.setdefault(w, {None})
    deployments = {d.name: d for d in software.deployments} if software is not None else {}
    counts = member_counts(cluster)
    for d in drafts:
        for r in d.references:
            if r.kind == "member":
                _check_member(MemberRef.parse(r.ref), r.path, members, out)
            elif r.kind == "network":
                of, _, name = r.ref.partition(" ")
                if name not in own[of]:
                    out.add(r.path, unknown(of.replace("_", " "), name, own[of]))
            else:
                _check_output(r.ref, r.path, deployments, software, out)
        why = too_big(d.value, counts) if d.value is not None else None
        if why is not None:
            out.add(child(d.path, "value"), why)


def _check_member(
    ref: MemberRef, where: str, members: dict[str, set[str | None]], out: ProblemList
) -> None:
    if ref.target not in members:
        out.add(where, unknown("node group or instance", ref.target, members))
        return
    parts = members[ref.target]
    if ref.part is not None and ref.part not in parts:
        out.add(where, unknown(f"part of '{ref.target}'", ref.part, [str(p) for p in parts if p]))


def _check_output(
    ref: str,
    where: str,
    deployments: dict[str, DeploymentDraft],
    sw: SoftwareDraft | None,
    out: ProblemList,
) -> None:
    name, _, output = ref.rpartition(".")
    d = deployments.get(name)
    if d is None or sw is None:
        out.add(where, unknown("deployment", name, deployments))
        return
    config = sw.configs.get(d.config) if d.config is not None else None
    if config is None:
        return  # reported where the deployment names it
    kinds = {o.name for o in config.outputs} | set(HEAT_OUTPUTS)
    if output not in kinds:
        out.add(where, unknown(f"output of deployment '{name}'", output, sorted(kinds)))


def build_outputs(drafts: list[OutputDraft]) -> tuple[ClusterOutput, ...]:
    return tuple(
        ClusterOutput(d.name, d.value, d.description) for d in drafts if d.value is not None
    )


# --- back to a document ----------------------------------------------------------------------


def outputs_document(outputs: tuple[ClusterOutput, ...]) -> dict[str, Json]:
    result: dict[str, Json] = {}
    for o in outputs:
        body: dict[str, Json] = {}
        if o.description:
            body["description"] = o.description
        body["value"] = value_document(o.value)
        result[o.name] = body
    return result


def value_document(value: OutputValue) -> Json:
    match value:
        case LiteralInput(v):
            # a mapping or list is escaped whole, so no part of it is read as a form again
            return {"value": v} if isinstance(v, dict | list) else v
        case MemberFactsInput(member, fact):
            return {"members": str(member), "fact": fact.value}
        case MemberFact(member, fact):
            return {"member": str(member), "fact": fact.value}
        case NetworkFact(attr, name):
            of = next(k for k, a in _NET_OF.items() if a is attr)
            return {"network_address": name, "of": of}
        case OutputInput(deployment, output, scope):
            return {"output": f"{deployment}.{output}", "from": scope.value}
        case TextTemplate(template, params):
            return {
                "template": template,
                "params": {k: value_document(v) for k, v in params.items()},
            }
        case JoinedText(separator, items):
            return {"join": [value_document(i) for i in items], "with": separator}
        case ListValue(items):
            return [value_document(i) for i in items]
        case MapValue(items):
            return {k: value_document(v) for k, v in items.items()}

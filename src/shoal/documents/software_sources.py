"""Where a deployment's input value comes from, as written in a native document.

    value: 42                               # a literal (any JSON value)
    value: {value: {param: x}}              # a literal mapping that looks like a source
    value: {param: NAME}                    # a parameter; a hidden one is a secret
    value: {secret: NAME}                   # a hidden parameter, served only to the node
    value: {node: address}                  # a fact of the node it runs on
    value: {members: GROUP[/part], fact: address}   # that fact of every active node, as a list
    value: {output: DEPLOYMENT.NAME, from: node}    # another deployment's output (from: all
                                                    # gives the list over its nodes)
    value: {network_address: NAME, of: port}        # deployments only: the address of the
                                        # cluster's port / floating_ip / load_balancer NAME

A mapping is a source when its keys are exactly one of these forms; any other mapping is a
literal. References are checked against the cluster and the other deployments afterwards
(`documents/software_checks.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from shoal.documents.collect import ProblemList, child
from shoal.documents.names import suggest
from shoal.documents.params import ParameterTable, to_json, too_deep
from shoal.documents.tree import describe, is_mapping, pairs_of
from shoal.model.members import MemberRef
from shoal.model.software import (
    InputSource,
    LiteralInput,
    MemberFactsInput,
    NetAttr,
    NetworkFact,
    NodeFact,
    NodeFactInput,
    OutputInput,
    OutputScope,
    SecretInput,
)

_FORMS: dict[str, frozenset[str]] = {
    "value": frozenset({"value"}),
    "param": frozenset({"param"}),
    "secret": frozenset({"secret"}),
    "node": frozenset({"node"}),
    "members": frozenset({"members", "fact"}),
    "output": frozenset({"output", "from"}),
}

_NETWORK_FORM = {"network_address": frozenset({"network_address", "of"})}
"""Read only where the address can be waited for (deployments' inputs, planning/software.py);
elsewhere such a mapping stays a literal, as before."""
NET_OF = {
    "port": NetAttr.PORT_ADDRESS,
    "floating_ip": NetAttr.FLOATING_IP_ADDRESS,
    "load_balancer": NetAttr.VIP_ADDRESS,
}


def is_source_shaped(value: object) -> bool:
    """Whether a literal would be read as a source (so it must be written as `{value: ...}`)."""
    return is_mapping(value) and any(
        str(k) in _FORMS or str(k) in _NETWORK_FORM for k, _ in pairs_of(value)
    )


@dataclass(frozen=True, slots=True)
class Source:
    """A read source and where each of its references was written."""

    source: InputSource
    path: str
    ref_path: str
    """Pointer of the reference (the `output` or `members` text), for problems about it."""


def read_source(
    value: object, path: str, params: ParameterTable, out: ProblemList, *, network: bool = False
) -> Source | None:
    """`network`: `{network_address: NAME, of: ...}` is a source (deployments' inputs)."""
    if too_deep(value):
        out.add(path, "the value nests too deeply")
        return None
    if not is_mapping(value):
        return Source(LiteralInput(to_json(value)), path, path)
    items = {str(k): v for k, v in pairs_of(value)}
    forms = {**_FORMS, **_NETWORK_FORM} if network else _FORMS
    form = next((k for k in forms if k in items), None)
    if form is None:
        return Source(LiteralInput(to_json(value)), path, path)
    extra = sorted(set(items) - forms[form])
    if extra:
        out.add(
            child(path, extra[0]),
            f"'{extra[0]}' does not go with '{form}' in an input source; "
            f"'{form}' takes {', '.join(sorted(forms[form]))}",
        )
        return None
    at = child(path, form)
    arg = items[form]
    match form:
        case "value":
            return Source(LiteralInput(to_json(arg)), path, at)
        case "param" | "secret":
            return _parameter(form, arg, path, at, params, out)
        case "node":
            fact = _fact(arg, at, out)
            return None if fact is None else Source(NodeFactInput(fact), path, at)
        case "members":
            if not isinstance(arg, str) or not arg:
                out.add(at, f"expected GROUP or GROUP/PART, found {describe(arg)}")
                return None
            fact = NodeFact.ADDRESS
            if "fact" in items:
                got = _fact(items["fact"], child(path, "fact"), out)
                if got is None:
                    return None
                fact = got
            return Source(MemberFactsInput(MemberRef.parse(arg), fact), path, at)
        case "network_address":
            return _network(arg, items.get("of"), path, at, out)
        case _:
            return _output(arg, items.get("from"), path, at, out)


def _network(name: object, of: object, path: str, at: str, out: ProblemList) -> Source | None:
    """The name is checked against the cluster's networking afterwards (software_checks.py)."""
    if not isinstance(name, str) or not name:
        out.add(at, f"name a port, floating IP or balancer, found {describe(name)}")
        return None
    attr = NET_OF.get(of) if isinstance(of, str) else None
    if attr is None:
        out.add(child(path, "of"), f"expected one of {', '.join(NET_OF)}, found {describe(of)}")
        return None
    return Source(NetworkFact(attr, name), path, at)


def _parameter(
    form: str, name: object, path: str, at: str, params: ParameterTable, out: ProblemList
) -> Source | None:
    p = params.get(name) if isinstance(name, str) else None
    if p is None:
        known = sorted(params.params)
        hint = suggest(name, known) if isinstance(name, str) else ""
        out.add(at, f"no parameter named {describe(name)}{hint}")
        return None
    if form == "secret" and not p.hidden:
        out.add(
            at,
            f"parameter '{p.name}' is not hidden; declare it with 'hidden: true' "
            "to use it as a secret",
        )
        return None
    if p.broken:
        return None
    if not p.has_value:
        out.add(
            at,
            f"parameter '{p.name}' has no value: give it a default, or a value in an "
            "environment's parameters",
        )
        return None
    if p.hidden:
        return Source(SecretInput(p.name), path, at)
    return Source(LiteralInput(p.value), path, at)


def _fact(value: object, at: str, out: ProblemList) -> NodeFact | None:
    allowed = [f.value for f in NodeFact]
    if isinstance(value, str) and value in allowed:
        return NodeFact(value)
    hint = suggest(value, allowed) if isinstance(value, str) else ""
    out.add(at, f"unknown node fact {describe(value)}{hint}; choose one of {', '.join(allowed)}")
    return None


def _output(ref: object, scope: object, path: str, at: str, out: ProblemList) -> Source | None:
    if not isinstance(ref, str) or "." not in ref.strip("."):
        out.add(at, f"expected DEPLOYMENT.OUTPUT, found {describe(ref)}")
        return None
    deployment, _, output = ref.rpartition(".")
    which = OutputScope.NODE
    if scope is not None:
        allowed = [s.value for s in OutputScope]
        if not isinstance(scope, str) or scope not in allowed:
            out.add(
                child(path, "from"),
                f"expected one of {', '.join(allowed)}, found {describe(scope)}",
            )
            return None
        which = OutputScope(scope)
    return Source(OutputInput(deployment, output, which), path, at)

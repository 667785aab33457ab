"""Checks of the software section across its parts and against the cluster, all at once.

Unknown config, target, member, deployment or output; an input the config does not declare;
a value of the wrong type for its input; a deployment depending on itself; and dependency
cycles (declared or through outputs), each reported once as the loop, e.g. "a → b → a".
"""

from __future__ import annotations

from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft
from shoal.documents.names import unknown
from shoal.documents.software import DeploymentDraft, SoftwareDraft
from shoal.documents.software_sources import Source
from shoal.model.graph import find_cycle
from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.software import (
    IOType,
    Json,
    LiteralInput,
    MemberFactsInput,
    NetAttr,
    NetworkFact,
    NodeFact,
    NodeFactInput,
    OutputInput,
    OutputScope,
    SecretInput,
    SoftwareConfig,
)

HEAT_OUTPUTS = {
    "deploy_stdout": IOType.STRING,
    "deploy_stderr": IOType.STRING,
    "deploy_status_code": IOType.NUMBER,
}
"""Outputs every deployment has, as in Heat."""


def _members(cluster: ClusterDraft) -> dict[str, set[str | None]]:
    """Member name -> its parts ({None} for a group of one profile or an instance)."""
    members: dict[str, set[str | None]] = {}
    for g in cluster.groups:
        if g.name is not None:
            members[g.name] = {p.part for p in g.parts or []} or {None}
    for i in cluster.instances:
        if i.name is not None:
            members[i.name] = {None}
    return members


def check_software(
    sw: SoftwareDraft,
    cluster: ClusterDraft,
    out: ProblemList,
    *,
    workloads: frozenset[str] | set[str] = frozenset(),
    networking: NetworkSpec | None = None,
) -> None:
    """`workloads`: the document's workload names, whose `{members: W}` inputs may read (the
    ready replicas' addresses; a deployment still targets node groups and instances only).
    `networking`: the cluster's, which `{network_address: ...}` inputs must name (HOT's
    mapping checks its own, documents/hot/netattrs.py)."""
    members = _members(cluster)
    readable = dict(members)
    for w in workloads:
        readable.setdefault(w, {None})
    by_name = {d.name: d for d in sw.deployments}
    for d in sw.deployments:
        config = sw.configs.get(d.config) if d.config is not None else None
        if d.config is not None and config is None and d.config not in sw.config_paths:
            out.add(child(d.path, "config"), unknown("config", d.config, sw.configs))
        if d.target is not None:
            _member(d.target, child(d.path, "target"), members, out)
        for dep, where in d.depends_on:
            if dep == d.name:
                out.add(where, f"deployment '{dep}' depends on itself")
            elif dep not in by_name:
                out.add(where, unknown("deployment", dep, by_name))
        for name, source in d.inputs.items():
            _input(d, name, source, config, sw, by_name, readable, out)
            if networking is not None and isinstance(source.source, NetworkFact):
                _network(source.source, source.ref_path, networking, out)
    _cycles(sw, by_name, out)


def _network(fact: NetworkFact, where: str, net: NetworkSpec, out: ProblemList) -> None:
    own: set[str | None]
    if fact.attr is NetAttr.PORT_ADDRESS:
        kind, own = "port", {p.name for p in net.ports}
    elif fact.attr is NetAttr.FLOATING_IP_ADDRESS:
        kind, own = "floating IP", {f.name for f in net.floating_ips}
    else:
        kind, own = "load balancer", {b.name for b in net.load_balancers}
    if fact.name not in own:
        out.add(where, unknown(kind, fact.name, sorted(n for n in own if n is not None)))


def _member(text: str, where: str, members: dict[str, set[str | None]], out: ProblemList) -> None:
    ref = MemberRef.parse(text)
    if ref.target not in members:
        out.add(where, unknown("node group or instance", ref.target, members))
        return
    parts = members[ref.target]
    if ref.part is not None and ref.part not in parts:
        named = sorted(p for p in parts if p is not None)
        if not named:
            out.add(where, f"'{ref.target}' has no parts; target it as '{ref.target}'")
        else:
            out.add(where, unknown(f"part of '{ref.target}'", ref.part, named))


def _input(
    d: DeploymentDraft,
    name: str,
    source: Source,
    config: SoftwareConfig | None,
    sw: SoftwareDraft,
    by_name: dict[str, DeploymentDraft],
    members: dict[str, set[str | None]],
    out: ProblemList,
) -> None:
    declared = None
    if config is not None:
        declared = next((i for i in config.inputs if i.name == name), None)
        if declared is None:
            known = [i.name for i in config.inputs]
            out.add(source.path, unknown(f"input of config '{config.name}'", name, known))
            return
    match source.source:
        case LiteralInput(value):
            if declared is not None and not _fits(value, declared.type):
                out.add(source.path, _mismatch(declared.type, _type_of(value), name))
        case SecretInput():
            if declared is not None and declared.type not in (IOType.STRING, IOType.JSON):
                out.add(source.path, _mismatch(declared.type, IOType.STRING, name))
        case NodeFactInput(fact):
            got = IOType.NUMBER if fact is NodeFact.INDEX else IOType.STRING
            if declared is not None and not _compatible(got, declared.type):
                out.add(source.path, _mismatch(declared.type, got, name))
        case MemberFactsInput(member, _):
            _member(str(member), source.ref_path, members, out)
            if declared is not None and declared.type not in (IOType.LIST, IOType.JSON):
                out.add(source.path, _mismatch(declared.type, IOType.LIST, name))
        case OutputInput(dep, output, scope):
            _output(d, name, dep, output, scope, declared, source, sw, by_name, out)
        case NetworkFact():
            if declared is not None and not _compatible(IOType.STRING, declared.type):
                out.add(source.path, _mismatch(declared.type, IOType.STRING, name))


def _output(
    d: DeploymentDraft,
    name: str,
    dep: str,
    output: str,
    scope: OutputScope,
    declared: object,
    source: Source,
    sw: SoftwareDraft,
    by_name: dict[str, DeploymentDraft],
    out: ProblemList,
) -> None:
    other = by_name.get(dep)
    if other is None:
        out.add(source.ref_path, unknown("deployment", dep, by_name))
        return
    if dep == d.name:
        out.add(source.ref_path, f"deployment '{dep}' cannot consume its own output")
        return
    config = sw.configs.get(other.config) if other.config is not None else None
    if config is None:
        return  # its config is reported where it is named
    kinds = {o.name: o.type for o in config.outputs} | HEAT_OUTPUTS
    if output not in kinds:
        out.add(source.ref_path, unknown(f"output of deployment '{dep}'", output, kinds))
        return
    got = IOType.LIST if scope is OutputScope.ALL else kinds[output]
    want = getattr(declared, "type", None)
    if isinstance(want, IOType) and not _compatible(got, want):
        out.add(source.path, _mismatch(want, got, name))


def _cycles(sw: SoftwareDraft, by_name: dict[str, DeploymentDraft], out: ProblemList) -> None:
    edges: dict[str, list[str]] = {}
    for d in sw.deployments:
        deps = [n for n, _ in d.depends_on if n in by_name and n != d.name]
        deps += [
            s.source.deployment
            for s in d.inputs.values()
            if isinstance(s.source, OutputInput)
            and s.source.deployment in by_name
            and s.source.deployment != d.name
        ]
        edges[d.name] = deps
    reported: set[str] = set()
    while (loop := find_cycle(edges)) is not None:
        if not reported.intersection(loop):
            first = by_name[loop[0]]
            out.add(
                child(first.path, "depends_on"),
                f"deployment dependency cycle: {' → '.join(loop)}; remove one of these "
                "dependencies",
            )
        reported.update(loop)
        # break this loop and look for another that does not share its members
        edges[loop[-2]] = [n for n in edges[loop[-2]] if n != loop[-1]]


def _type_of(value: Json) -> IOType:
    if isinstance(value, bool):
        return IOType.BOOLEAN
    if isinstance(value, int | float):
        return IOType.NUMBER
    if isinstance(value, list):
        return IOType.LIST
    if isinstance(value, dict):
        return IOType.JSON
    return IOType.STRING


def _fits(value: Json, want: IOType) -> bool:
    if value is None or want is IOType.JSON:
        return True
    got = _type_of(value)
    if want is IOType.STRING:
        return got in (IOType.STRING, IOType.NUMBER, IOType.BOOLEAN)
    if want is IOType.NUMBER and isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    if want is IOType.LIST:
        return got is IOType.STRING or (
            isinstance(value, list) and all(not isinstance(v, list | dict) for v in value)
        )
    return got is want


def _compatible(got: IOType, want: IOType) -> bool:
    if want in (IOType.JSON, got) or got is IOType.JSON:
        return True
    return want is IOType.STRING and got in (IOType.NUMBER, IOType.BOOLEAN)


def _mismatch(want: IOType, got: IOType, name: str) -> str:
    return f"input '{name}' is declared {want} but is given a {got} value"

"""The `workloads` section of a native document (docs/workloads.md).

    workloads:
      NAME:
        replicas: 3            # min, max bound it for `shoal scale`
        containers:            # or template: a Kubernetes Pod / apps/v1 Deployment manifest
          - name: api
            image: localhost/api:1
            command: [...]; args: [...]
            env: {VAR: SOURCE}         # the sources of deployments' inputs
            ports: [8080]              # or {port, name, protocol}
            resources: {cpu: 0.5, memory_mb: 256}
            liveness: {http: /healthz, port: 8080, period_s: 10}
            readiness: {tcp: 8080}
        restart: always | on-failure | never
        rules: [{rule: anti-affinity | affinity | spread, scope: node | host | zone,
                 against: OTHER, max_per_domain, max_skew}]
        max_per_node: 2
        nodes: {groups: [GROUP], labels: {K: V}}
        depends_on: [DEPLOYMENT or WORKLOAD]
        update: {max_unavailable: 1, max_surge: 1}

Each workload is read on its own; checks across workloads, deployments and the cluster
(names, cycles, ports) run in `check_workloads`. Every count and size is bounded before work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name
from shoal.documents.params import ParameterTable
from shoal.documents.policies import read_scaling
from shoal.documents.software_sources import Source, read_source
from shoal.documents.tree import describe, is_mapping, quote
from shoal.documents.workloads_fields import argv, cpu_milli, memory_mb, native_probe, port
from shoal.documents.workloads_k8s import Template, read_manifest
from shoal.model.graph import find_cycle
from shoal.model.policies import ScalingPolicy
from shoal.model.software import InputSource, MemberFactsInput, OutputInput, SecretInput
from shoal.model.workloads import (
    Container,
    ContainerPort,
    NodeSelector,
    RestartPolicy,
    RollingSettings,
    TemplateKind,
    Workload,
    WorkloadRule,
    WorkloadRuleKind,
    WorkloadScope,
)

MAX_WORKLOADS = 500
MAX_WORKLOAD_REPLICAS = 10_000
MAX_TOTAL_REPLICAS = 150_000
"""Kubernetes' documented limit of pods in a cluster (issue 37 places that many)."""
MAX_CONTAINERS = 16
MAX_PORTS = 32
"""Ports of one container."""
MAX_ENV = 200
"""Variables of one container."""
MAX_ENV_BYTES = 256 * 1024
"""Literal env values of one container, together."""
MAX_RULES = 32


@dataclass(slots=True)
class WorkloadDraft:
    name: str
    path: str
    containers: list[Container] = field(default_factory=list)
    env_sources: list[Source] = field(default_factory=list)
    replicas: int | None = None
    min_replicas: int = 0
    max_replicas: int | None = None
    restart: RestartPolicy = RestartPolicy.ALWAYS
    rules: list[tuple[WorkloadRule, str]] = field(default_factory=list)
    max_per_node: int | None = None
    selector: NodeSelector = field(default_factory=NodeSelector)
    selector_path: str = ""
    depends_on: list[tuple[str, str]] = field(default_factory=list)
    update: RollingSettings = field(default_factory=RollingSettings)
    scaling: ScalingPolicy | None = None
    kind: TemplateKind = TemplateKind.NATIVE
    broken: bool = False


@dataclass(slots=True)
class WorkloadsDraft:
    workloads: list[WorkloadDraft] = field(default_factory=list)


def read_workloads(
    raw: object, path: str, params: ParameterTable, out: ProblemList
) -> WorkloadsDraft:
    draft = WorkloadsDraft()
    if raw is None:
        return draft
    f = mapping(raw, path, out, "'workloads' (a mapping of names to workloads)")
    if f is None:
        return draft
    entries = f.entries()
    if len(entries) > MAX_WORKLOADS:
        out.add(path, f"at most {MAX_WORKLOADS} workloads, found {len(entries)}")
        return draft
    total = 0
    for name, body in entries:
        where = f.at(name)
        if not is_name(name):
            out.add(where, f"{quote(name)} is not a valid name: {NAME_RULE}")
            continue
        w = _workload(name, body, where, params, out)
        total += w.replicas or 0
        draft.workloads.append(w)
    if total > MAX_TOTAL_REPLICAS:
        out.add(path, f"at most {MAX_TOTAL_REPLICAS} replicas in all workloads, found {total}")
    return draft


def _workload(
    name: str, body: object, path: str, params: ParameterTable, out: ProblemList
) -> WorkloadDraft:
    draft = WorkloadDraft(name, path)
    f = mapping(body, path, out, "a workload")
    if f is None:
        draft.broken = True
        return draft
    before = len(out)
    template: Template | None = None
    if f.has("template") and f.has("containers"):
        f.problem("template", "give either 'containers' or a Kubernetes 'template', not both")
    elif f.has("template"):
        template = read_manifest(f.raw("template"), f.at("template"), out)
    else:
        draft.containers = _containers(f, params, draft, out)
    if template is not None:
        draft.containers = list(template.containers)
        draft.kind = template.kind
        draft.restart = template.restart
    restart = f.choice("restart", RestartPolicy)
    if restart is not None:
        if template is not None and template.restart_given:
            f.problem("restart", "the template sets restartPolicy already; give it once")
        draft.restart = restart
    given = template.replicas if template is not None else None
    draft.replicas = f.integer("replicas", minimum=0, maximum=MAX_WORKLOAD_REPLICAS)
    if draft.replicas is not None and given is not None:
        f.problem("replicas", "the Deployment manifest sets spec.replicas already; give it once")
    elif draft.replicas is None and not f.has("replicas"):
        draft.replicas = given
        if given is None and not (f.has("template") and template is None):
            f.problem("replicas", "'replicas' is missing: give the number of replicas")
    draft.min_replicas = f.integer("min", minimum=0, maximum=MAX_WORKLOAD_REPLICAS, default=0) or 0
    draft.max_replicas = f.integer("max", minimum=0, maximum=MAX_WORKLOAD_REPLICAS)
    _check_size(f, draft)
    draft.rules = _rules(f, out)
    draft.max_per_node = f.integer("max_per_node", minimum=1, maximum=MAX_WORKLOAD_REPLICAS)
    draft.selector, draft.selector_path = _selector(f, template, out)
    draft.depends_on = f.names("depends_on", what="deployment or workload name") or []
    draft.update = _update(f, template)
    draft.scaling = read_scaling(f)  # receivers' triggers, as a node group's
    f.finish()
    draft.broken = len(out) > before
    return draft


def _check_size(f: Fields, d: WorkloadDraft) -> None:
    if d.max_replicas is not None and d.min_replicas > d.max_replicas:
        f.problem("min", f"min ({d.min_replicas}) is above max ({d.max_replicas})")
    elif d.replicas is not None:
        if d.replicas < d.min_replicas:
            f.problem("replicas", f"replicas ({d.replicas}) is below min ({d.min_replicas})")
        if d.max_replicas is not None and d.replicas > d.max_replicas:
            f.problem("replicas", f"replicas ({d.replicas}) is above max ({d.max_replicas})")


def _containers(
    f: Fields, params: ParameterTable, draft: WorkloadDraft, out: ProblemList
) -> list[Container]:
    items = f.items("containers", what="containers")
    if not f.has("containers"):
        f.problem("containers", "'containers' is missing: give at least one container")
        return []
    if not items:
        f.problem("containers", "give at least one container")
        return []
    if len(items) > MAX_CONTAINERS:
        f.problem("containers", f"at most {MAX_CONTAINERS} containers, found {len(items)}")
        return []
    result = []
    for value, where in items:
        c = _container(value, where, params, draft, out)
        if c is not None:
            result.append(c)
    names = [c.name for c in result]
    for i, n in enumerate(names):
        if n in names[:i]:
            out.add(child(f.at("containers"), i, "name"), f"container '{n}' is named twice")
    _check_ports(result, f.at("containers"), out)
    return result


def _container(
    value: object, path: str, params: ParameterTable, draft: WorkloadDraft, out: ProblemList
) -> Container | None:
    f = mapping(value, path, out, "a container")
    if f is None:
        return None
    before = len(out)
    name = f.name("name", required="name the container")
    image = f.text("image", required="give the container's image", empty_ok=False)
    command = argv(f, "command")
    args = argv(f, "args")
    env = _env(f, params, draft)
    ports = _ports(f)
    cpu, mem = _resources(f)
    liveness = native_probe(f.raw("liveness"), f.at("liveness"), out) if f.has("liveness") else None
    readiness = (
        native_probe(f.raw("readiness"), f.at("readiness"), out) if f.has("readiness") else None
    )
    f.finish()
    if len(out) > before or name is None or image is None:
        return None
    return Container(
        name, image, command, args, env, ports, cpu, mem, liveness=liveness, readiness=readiness
    )


def _env(f: Fields, params: ParameterTable, draft: WorkloadDraft) -> dict[str, InputSource]:
    raw = f.raw("env")
    if raw is None:
        return {}
    e = mapping(raw, f.at("env"), f.out, "'env' (a mapping of variable names to values)")
    if e is None:
        return {}
    entries = e.entries()
    if len(entries) > MAX_ENV:
        f.problem("env", f"at most {MAX_ENV} variables, found {len(entries)}")
        return {}
    env: dict[str, InputSource] = {}
    size = 0
    for key, value in entries:
        source = read_source(value, e.at(key), params, f.out)
        if source is None:
            continue
        size += len(key) + len(str(getattr(source.source, "value", "")))
        env[key] = source.source
        draft.env_sources.append(source)
    if size > MAX_ENV_BYTES:
        f.problem("env", f"at most {MAX_ENV_BYTES} bytes of variables, found {size}")
    return env


def _ports(f: Fields) -> tuple[ContainerPort, ...]:
    items = f.items("ports", what="ports")
    if len(items) > MAX_PORTS:
        f.problem("ports", f"at most {MAX_PORTS} ports, found {len(items)}")
        return ()
    result: list[ContainerPort] = []
    for value, where in items:
        if is_mapping(value):
            p = mapping(value, where, f.out, "a port")
            assert p is not None
            number = port(p.raw("port", required="give the port number"), p.at("port"), f.out)
            name = p.text("name", empty_ok=False)
            protocol = p.text("protocol", empty_ok=False) or "tcp"
            if protocol.lower() not in ("tcp", "udp"):
                p.problem("protocol", f"expected tcp or udp, found {describe(protocol)}")
            p.finish()
            if number is not None:
                result.append(ContainerPort(number, name, protocol.lower()))
        else:
            number = port(value, where, f.out)
            if number is not None:
                result.append(ContainerPort(number))
    return tuple(result)


def _resources(f: Fields) -> tuple[int, int]:
    raw = f.raw("resources")
    if raw is None:
        return 0, 0
    r = mapping(raw, f.at("resources"), f.out, "'resources'")
    if r is None:
        return 0, 0
    cpu = cpu_milli(r.raw("cpu"), r.at("cpu"), f.out) if r.has("cpu") else 0
    mem = (
        memory_mb(r.raw("memory_mb"), r.at("memory_mb"), bare_unit_mb=True, out=f.out)
        if r.has("memory_mb")
        else 0
    )
    r.finish()
    return cpu or 0, mem or 0


def _check_ports(containers: list[Container], at: str, out: ProblemList) -> None:
    """Containers of one replica share the node's network: one port, one container."""
    seen: dict[tuple[int, str], str] = {}
    for i, c in enumerate(containers):
        for p in c.ports:
            key = (p.port, p.protocol)
            if key in seen:
                out.add(
                    child(at, i, "ports"),
                    f"port {p.port}/{p.protocol} is bound by container '{seen[key]}' too; "
                    "containers of a replica share the node's address",
                )
            seen[key] = c.name


def _rules(f: Fields, out: ProblemList) -> list[tuple[WorkloadRule, str]]:
    items = f.items("rules", what="rules")
    if len(items) > MAX_RULES:
        f.problem("rules", f"at most {MAX_RULES} rules, found {len(items)}")
        return []
    rules = []
    for value, where in items:
        r = mapping(value, where, out, "a rule")
        if r is None:
            continue
        kind = r.choice("rule", WorkloadRuleKind, required="say which rule")
        scope = r.choice("scope", WorkloadScope, default=WorkloadScope.NODE)
        against = r.name("against")
        per = r.integer("max_per_domain", minimum=1, maximum=MAX_WORKLOAD_REPLICAS)
        skew = r.integer("max_skew", minimum=1, maximum=MAX_WORKLOAD_REPLICAS)
        if per is not None and kind is not WorkloadRuleKind.ANTI_AFFINITY:
            r.problem("max_per_domain", f"max_per_domain only applies to anti-affinity, not {kind}")
        if skew is not None and kind is not WorkloadRuleKind.SPREAD:
            r.problem("max_skew", f"max_skew only applies to spread, not {kind}")
        if against is not None and kind is WorkloadRuleKind.SPREAD:
            r.problem("against", "spread is between a workload's own replicas; drop 'against'")
        r.finish()
        if kind is not None and scope is not None:
            rules.append((WorkloadRule(kind, scope, against, per or 1, skew or 1), where))
    return rules


def _selector(f: Fields, template: Template | None, out: ProblemList) -> tuple[NodeSelector, str]:
    labels = dict(template.node_selector) if template is not None else {}
    raw = f.raw("nodes")
    if raw is None:
        return NodeSelector(labels=labels), f.at("nodes")
    n = mapping(raw, f.at("nodes"), out, "'nodes' (groups and labels)")
    if n is None:
        return NodeSelector(labels=labels), f.at("nodes")
    groups = n.names("groups", what="node group or instance name") or []
    given = n.text_map("labels") or {}
    n.finish()
    if labels and given:
        n.problem("labels", "the template's nodeSelector names labels already; give them once")
    return NodeSelector(tuple(g for g, _ in groups), given or labels), f.at("nodes")


def _update(f: Fields, template: Template | None) -> RollingSettings:
    base = template.update if template is not None else RollingSettings()
    raw = f.raw("update")
    if raw is None:
        return base
    u = mapping(raw, f.at("update"), f.out, "'update'")
    if u is None:
        return base
    unavailable = u.integer("max_unavailable", minimum=0, maximum=MAX_WORKLOAD_REPLICAS)
    surge = u.integer("max_surge", minimum=0, maximum=MAX_WORKLOAD_REPLICAS)
    u.finish()
    result = RollingSettings(
        unavailable if unavailable is not None else base.max_unavailable,
        surge if surge is not None else base.max_surge,
    )
    if result.max_unavailable == 0 and result.max_surge == 0:
        u.problem("max_unavailable", "max_unavailable and max_surge cannot both be 0")
    return result


def check_workloads(
    draft: WorkloadsDraft,
    members: dict[str, dict[str, str]],
    deployments: set[str],
    out: ProblemList,
) -> None:
    """References across the document: `depends_on`, rules' `against`, node selectors'
    groups and `{members: ...}`/`{output: ...}` in env; loops through workloads."""
    names = {w.name for w in draft.workloads}
    for w in draft.workloads:
        for dep, where in w.depends_on:
            if dep == w.name:
                out.add(where, f"workload '{dep}' depends on itself")
            elif dep not in names and dep not in deployments:
                out.add(where, _unknown("deployment or workload", dep, names | deployments))
        for rule, where in w.rules:
            if rule.against is not None and rule.against not in names:
                out.add(child(where, "against"), _unknown("workload", rule.against, names))
        for i, g in enumerate(w.selector.groups):
            if g not in members:
                at = child(w.selector_path, "groups", i)
                out.add(at, _unknown("node group or instance", g, set(members)))
        for s in w.env_sources:
            _check_source(s, names, members, deployments, out)
    edges = {w.name: [n for n, _ in w.depends_on if n in names] for w in draft.workloads}
    cycle = find_cycle(edges)
    if cycle is not None:
        first = next(w for w in draft.workloads if w.name == cycle[0])
        out.add(child(first.path, "depends_on"), "a dependency loop: " + " -> ".join(cycle))


def _check_source(
    s: Source,
    workloads: set[str],
    members: dict[str, dict[str, str]],
    deployments: set[str],
    out: ProblemList,
) -> None:
    match s.source:
        case MemberFactsInput(member, _):
            if member.target not in workloads and member.target not in members:
                known = workloads | set(members)
                out.add(
                    s.ref_path, _unknown("workload, node group or instance", str(member), known)
                )
        case OutputInput(deployment, _, _):
            if deployment not in deployments:
                out.add(s.ref_path, _unknown("deployment", deployment, deployments))
        case _:
            pass


def _unknown(what: str, name: str, known: set[str]) -> str:
    listed = ", ".join(sorted(known)) or "none"
    return f"no {what} named '{name}' (known: {listed})"


def build_workloads(draft: WorkloadsDraft) -> tuple[Workload, ...]:
    """The model of a draft that produced no problems."""
    return tuple(
        Workload(
            name=w.name,
            containers=tuple(w.containers),
            replicas=w.replicas or 0,
            min_replicas=w.min_replicas,
            max_replicas=w.max_replicas,
            restart=w.restart,
            rules=tuple(r for r, _ in w.rules),
            max_per_node=w.max_per_node,
            selector=w.selector,
            depends_on=tuple(n for n, _ in w.depends_on),
            update=w.update,
            scaling=w.scaling,
            kind=w.kind,
        )
        for w in draft.workloads
    )


def secrets_used(workloads: tuple[Workload, ...]) -> set[str]:
    return {
        s.parameter
        for w in workloads
        for c in w.containers
        for s in c.env.values()
        if isinstance(s, SecretInput)
    }

"""A Kubernetes Pod (v1) or Deployment (apps/v1) manifest as a workload's template.

Only the fields that mean something on Shoal's nodes are read; everything else is refused by
name with a pointer, so a manifest never silently loses what its author relied on. The mapping
to Shoal's own fields is in docs/workloads.md: containers' name, image, command, args, env
(literal `value` only), ports (`containerPort`, `name`, `protocol`), `resources.requests`,
liveness/readiness probes (httpGet, tcpSocket, exec and their timings); the Pod's
`restartPolicy`, `nodeSelector` and `hostNetwork` (containers always use the node's network);
a Deployment's `replicas`, `selector` (must match the template's labels) and
`strategy.rollingUpdate`. Placement rules are Shoal's `rules`, not Kubernetes' `affinity`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import ProblemList
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name
from shoal.documents.tree import describe, is_mapping
from shoal.documents.workloads_fields import (
    MAX_FAILURE_THRESHOLD,
    MAX_PROBE_DELAY_S,
    MAX_PROBE_PERIOD_S,
    MAX_PROBE_TIMEOUT_S,
    argv,
    cpu_milli,
    memory_mb,
    port,
)
from shoal.model.software import LiteralInput
from shoal.model.workloads import (
    Container,
    ContainerPort,
    Probe,
    ProbeKind,
    RestartPolicy,
    RollingSettings,
    TemplateKind,
)

_REFUSED = {
    "affinity": "placement rules are the workload's 'rules' (anti-affinity, affinity, spread)",
    "tolerations": "Shoal's nodes carry no taints",
    "volumes": "replicas keep no volumes; state belongs in a deployment's server",
    "initContainers": "order containers with 'depends_on' between workloads",
    "hostPID": "the host's namespaces are refused",
    "hostIPC": "the host's namespaces are refused",
    "securityContext": "containers run unprivileged, as the node's own user",
    "serviceAccountName": "there is no Kubernetes API on the node",
    "volumeMounts": "replicas keep no volumes",
    "envFrom": "give each variable in 'env'",
    "lifecycle": "hooks are not run; use the command",
    "startupProbe": "use livenessProbe's initialDelaySeconds",
}
_RESTART = {
    "Always": RestartPolicy.ALWAYS,
    "OnFailure": RestartPolicy.ON_FAILURE,
    "Never": RestartPolicy.NEVER,
}
MAX_PROBE_SECONDS = int(max(MAX_PROBE_PERIOD_S, MAX_PROBE_TIMEOUT_S, MAX_PROBE_DELAY_S))


@dataclass(slots=True)
class Template:
    kind: TemplateKind
    containers: list[Container] = field(default_factory=list)
    restart: RestartPolicy = RestartPolicy.ALWAYS
    restart_given: bool = False
    replicas: int | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    update: RollingSettings = field(default_factory=RollingSettings)


def read_manifest(value: object, path: str, out: ProblemList) -> Template | None:
    f = mapping(value, path, out, "a Kubernetes manifest (kind: Pod or Deployment)")
    if f is None:
        return None
    before = len(out)
    kind = f.text("kind", required="say kind: Pod or kind: Deployment")
    api = f.text("apiVersion", required="give apiVersion (v1 for a Pod, apps/v1 for a Deployment)")
    f.raw("metadata")
    t: Template | None = None
    if kind == "Pod":
        if api is not None and api != "v1":
            f.problem("apiVersion", f"a Pod is apiVersion v1, not {describe(api)}")
        t = Template(TemplateKind.POD)
        _pod_spec(f.raw("spec", required="a Pod needs a spec"), f.at("spec"), t, out)
    elif kind == "Deployment":
        if api is not None and api != "apps/v1":
            f.problem("apiVersion", f"a Deployment is apiVersion apps/v1, not {describe(api)}")
        t = Template(TemplateKind.DEPLOYMENT)
        _deployment(f.raw("spec", required="a Deployment needs a spec"), f.at("spec"), t, out)
    elif kind is not None:
        f.problem("kind", f"kind must be Pod or Deployment, not {describe(kind)}")
    f.finish()
    return t if len(out) == before else None


def _deployment(value: object, path: str, t: Template, out: ProblemList) -> None:
    f = mapping(value, path, out, "a Deployment's spec")
    if f is None:
        return
    t.replicas = f.integer("replicas", minimum=0, maximum=10_000)
    strategy = f.raw("strategy")
    if strategy is not None:
        _strategy(strategy, f.at("strategy"), t, out)
    labels: dict[str, str] = {}
    tf = None
    if f.has("template"):
        tf = mapping(f.raw("template"), f.at("template"), out, "a Pod template")
    if tf is not None:
        meta = tf.raw("metadata")
        if is_mapping(meta):
            m = Fields(meta, tf.at("metadata"), out)
            labels = m.text_map("labels") or {}
            m.raw("name")
            m.raw("annotations")
            m.finish()
        _pod_spec(tf.raw("spec", required="a Pod template needs a spec"), tf.at("spec"), t, out)
        tf.finish()
    elif not f.has("template"):
        f.problem("template", "'template' is missing: a Deployment needs a Pod template")
    sel = f.raw("selector")
    if sel is not None:
        s = mapping(sel, f.at("selector"), out, "a selector")
        if s is not None:
            match = s.text_map("matchLabels") or {}
            s.finish()
            for k, v in match.items():
                if labels.get(k) != v:
                    s.problem("matchLabels", f"label {k}={v} is not on the template's labels")
    f.finish()


def _strategy(value: object, path: str, t: Template, out: ProblemList) -> None:
    f = mapping(value, path, out, "a strategy")
    if f is None:
        return
    kind = f.text("type")
    if kind is not None and kind != "RollingUpdate":
        f.problem("type", f"only RollingUpdate is supported, not {describe(kind)}")
    ru = f.raw("rollingUpdate")
    if ru is not None:
        r = mapping(ru, f.at("rollingUpdate"), out, "rollingUpdate")
        if r is not None:
            unavailable = r.integer("maxUnavailable", minimum=0, maximum=10_000, default=1)
            surge = r.integer("maxSurge", minimum=0, maximum=10_000, default=1)
            r.finish()
            if unavailable is not None and surge is not None:
                t.update = RollingSettings(unavailable, surge)
    f.finish()


def _pod_spec(value: object, path: str, t: Template, out: ProblemList) -> None:
    f = mapping(value, path, out, "a Pod spec")
    if f is None:
        return
    for key, why in _REFUSED.items():
        f.misplaced(key, f"'{key}' is refused: {why}")
    network = f.flag("hostNetwork", default=True)
    if network is False:
        f.problem("hostNetwork", "containers use the node's network: hostNetwork must be true")
    restart = f.text("restartPolicy")
    if restart is not None:
        if restart in _RESTART:
            t.restart, t.restart_given = _RESTART[restart], True
        else:
            f.problem("restartPolicy", f"expected Always, OnFailure or Never, found {restart!r}")
    t.node_selector = f.text_map("nodeSelector") or {}
    f.number("terminationGracePeriodSeconds", minimum=0)
    items = f.items("containers", what="containers")
    if not items:
        f.problem("containers", "a Pod needs at least one container")
    elif len(items) > 16:
        f.problem("containers", f"at most 16 containers, found {len(items)}")
    else:
        for value_, where in items:
            c = _container(value_, where, out)
            if c is not None:
                t.containers.append(c)
    f.finish()


def _container(value: object, path: str, out: ProblemList) -> Container | None:
    f = mapping(value, path, out, "a container")
    if f is None:
        return None
    before = len(out)
    for key, why in _REFUSED.items():
        f.misplaced(key, f"'{key}' is refused: {why}")
    name = f.text("name", required="name the container")
    if name is not None and not is_name(name):
        f.problem("name", f"{name!r} is not a valid name: {NAME_RULE}")
    image = f.text("image", required="give the container's image", empty_ok=False)
    command = argv(f, "command")
    args = argv(f, "args")
    f.raw("imagePullPolicy")
    f.raw("workingDir")
    env = _env(f, out)
    ports = _ports(f, out)
    cpu, mem = _requests(f, out)
    liveness = _probe(f.raw("livenessProbe"), f.at("livenessProbe"), out)
    readiness = _probe(f.raw("readinessProbe"), f.at("readinessProbe"), out)
    f.finish()
    if len(out) > before or name is None or image is None:
        return None
    return Container(name, image, command, args, env, ports, cpu, mem, liveness, readiness)


def _env(f: Fields, out: ProblemList) -> dict[str, LiteralInput]:
    env: dict[str, LiteralInput] = {}
    items = f.items("env", what="variables")
    if len(items) > 200:
        f.problem("env", f"at most 200 variables, found {len(items)}")
        return env
    for value, where in items:
        e = mapping(value, where, out, "a variable")
        if e is None:
            continue
        name = e.text("name", required="name the variable")
        text = e.text("value")
        e.misplaced("valueFrom", "'valueFrom' is refused: use Shoal's own 'env' sources")
        e.finish()
        if name is not None:
            env[name] = LiteralInput(text or "")
    return env


def _ports(f: Fields, out: ProblemList) -> tuple[ContainerPort, ...]:
    result = []
    items = f.items("ports", what="ports")
    if len(items) > 32:
        f.problem("ports", f"at most 32 ports, found {len(items)}")
        return ()
    for value, where in items:
        p = mapping(value, where, out, "a port")
        if p is None:
            continue
        for key in ("hostPort", "hostIP"):
            p.misplaced(key, f"'{key}' is refused: the container binds the node's address itself")
        number = port(
            p.raw("containerPort", required="give containerPort"), p.at("containerPort"), out
        )
        name = p.text("name")
        protocol = (p.text("protocol") or "TCP").lower()
        if protocol not in ("tcp", "udp"):
            p.problem("protocol", f"expected TCP or UDP, found {describe(protocol)}")
        p.finish()
        if number is not None:
            result.append(ContainerPort(number, name, protocol))
    return tuple(result)


def _requests(f: Fields, out: ProblemList) -> tuple[int, int]:
    raw = f.raw("resources")
    if raw is None:
        return 0, 0
    r = mapping(raw, f.at("resources"), out, "'resources'")
    if r is None:
        return 0, 0
    r.raw("limits")  # limits are the runtime's; placement counts what is requested
    req = r.raw("requests")
    r.finish()
    if req is None:
        return 0, 0
    q = mapping(req, r.at("requests"), out, "'requests'")
    if q is None:
        return 0, 0
    cpu = cpu_milli(q.raw("cpu"), q.at("cpu"), out) if q.has("cpu") else 0
    mem = (
        memory_mb(q.raw("memory"), q.at("memory"), bare_unit_mb=False, out=out)
        if q.has("memory")
        else 0
    )
    q.finish()
    return cpu or 0, mem or 0


def _probe(value: object, path: str, out: ProblemList) -> Probe | None:
    if value is None:
        return None
    f = mapping(value, path, out, "a probe")
    if f is None:
        return None
    kinds = [k for k in ("httpGet", "tcpSocket", "exec") if f.has(k)]
    probe: Probe | None = None
    if len(kinds) != 1:
        out.add(path, "give exactly one of httpGet, tcpSocket or exec")
    elif kinds[0] == "exec":
        e = mapping(f.raw("exec"), f.at("exec"), out, "exec")
        if e is not None:
            command = argv(e, "command")
            e.finish()
            probe = Probe(ProbeKind.EXEC, command=command) if command else None
            if not command:
                e.problem("command", "give the command to run")
    else:
        kind = ProbeKind.HTTP if kinds[0] == "httpGet" else ProbeKind.TCP
        h = mapping(f.raw(kinds[0]), f.at(kinds[0]), out, kinds[0])
        if h is not None:
            p = port(h.raw("port", required="give the port"), h.at("port"), out)
            where = h.text("path") if kind is ProbeKind.HTTP else None
            h.finish()
            if p is not None:
                probe = Probe(kind, port=p, path=where or "/")
    period = f.integer("periodSeconds", minimum=1, maximum=MAX_PROBE_SECONDS, default=10)
    timeout = f.integer("timeoutSeconds", minimum=1, maximum=MAX_PROBE_SECONDS, default=1)
    delay = f.integer("initialDelaySeconds", minimum=0, maximum=MAX_PROBE_SECONDS, default=0)
    threshold = f.integer("failureThreshold", minimum=1, maximum=MAX_FAILURE_THRESHOLD, default=3)
    f.integer("successThreshold", minimum=1, maximum=1)
    f.finish()
    if probe is None or None in (period, timeout, delay, threshold):
        return None
    assert period is not None and timeout is not None and delay is not None
    assert threshold is not None
    return Probe(
        probe.kind,
        port=probe.port,
        path=probe.path,
        command=probe.command,
        period_s=float(period),
        timeout_s=float(timeout),
        failure_threshold=threshold,
        initial_delay_s=float(delay),
    )

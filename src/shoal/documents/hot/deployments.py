"""Heat software configs and deployments onto Shoal's software model (`model/software.py`).

Runs after `assemble.py`, because a deployment's target and the facts its inputs take are
named by the cluster elements its servers became:

- `SoftwareConfig` / `StructuredConfig` → a config (`group` must be one of Shoal's hook
  groups; a structured config's mapping is served as JSON text).
- `SoftwareDeployment(s)` / `StructuredDeployment(s)` on `server: {get_resource: S}` → a
  deployment targeting S's instance (or S's `server` part when volumes made it a unit);
  `SoftwareDeploymentGroup` / `StructuredDeploymentGroup` on `servers: {get_attr: [G,
  refs_map]}` → one targeting ResourceGroup G's node group; on a map of servers of this
  template → one deployment per server, named `GROUP-KEY` (what depends on the group depends
  on all of them). TripleO's style, `servers: {get_attr: [ROLE, OUTPUT]}` of a nested
  template, and a server a parent passed in, are read where they lead (`through.py`).
- `input_values`: a literal → `LiteralInput`; `get_param` of a hidden parameter →
  `SecretInput`; `get_attr: [R, value]` (or `get_resource: R`) of an `OS::Heat::RandomString`
  → `SecretInput` of a value drawn once (`randomness.py`; not in a group's member, where Heat
  draws one per member); `get_attr: [S, first_address | networks … | name]` → `NodeFactInput` on S
  itself, `MemberFactsInput` (a list) on another server or a group; `get_attr: [D, OUTPUT]` of
  a deployment → `OutputInput` (the same node's value, or the list over a group's nodes).
  Heat passes inputs a config does not declare; so does Shoal, declaring them on the config.
- `depends_on` between deployments is kept; `actions` keep CREATE, UPDATE and DELETE (SUSPEND
  and RESUME have no Shoal counterpart and are noticed).

The same holds in nested templates and ResourceGroup members: their configs and deployments are
named `PREFIX-NAME` after the element prefix their template's elements got (`ctl-sw` for
deployment `sw` of nested resource `ctl`), and a deployment in a group member targets the
group (it runs on every replica, each with its own node facts). Anything else is one
unsupported item naming the type or property and its pointer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import partial

from shoal.documents.collect import child
from shoal.documents.containers import check_containers
from shoal.documents.drafts import ClusterDraft
from shoal.documents.hot.assemble import Placed
from shoal.documents.hot.evaluator import BROKEN
from shoal.documents.hot.netattrs import net_attr, owned
from shoal.documents.hot.randomness import generate, mark
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import Shape, SoftwareShape
from shoal.documents.hot.through import (
    Inside,
    NotRead,
    follow,
    group_by_member_output,
    server_of,
    shapes_by_scope,
)
from shoal.documents.hot.values import Attr, Ref, first_symbolic, shown
from shoal.documents.names import NAME_RULE, is_name
from shoal.documents.params import to_json
from shoal.documents.software import DeploymentDraft, SoftwareDraft, build_software
from shoal.documents.software_checks import check_software
from shoal.documents.software_sources import Source
from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.outputs import NetAttr, NetworkFact, declared_address
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    DeployAction,
    HookGroup,
    InputSource,
    IOType,
    Json,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFactInput,
    OutputInput,
    OutputScope,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)

DEPLOYMENT_SUFFIXES = ("Deployment", "Deployments", "DeploymentGroup")
MAPPED_CONFIGS = frozenset({"OS::Heat::SoftwareConfig", "OS::Heat::StructuredConfig"})
_HOOKS = {h.value: h for h in HookGroup}
_IO = {t.value: t for t in IOType}
_ADDRESS_ATTRS = frozenset({"first_address", "networks", "addresses", "accessIPv4"})
_HEAT_ONLY_ACTIONS = ("SUSPEND", "RESUME")
RANDOM_STRING = "OS::Heat::RandomString"
STRUCTURED = "OS::Heat::Structured"
DEFAULT_INPUT_KEY = "get_input"
DERIVED_INPUTS = (
    "deploy_server_id",
    "deploy_action",
    "deploy_stack_id",
    "deploy_resource_name",
    "deploy_signal_transport",
    "deploy_signal_id",
    "deploy_signal_verb",
)
"""Inputs Heat gives every deployment (model/heat_agent.py serves them)."""


@dataclass(slots=True)
class _Map:
    shape: Shape
    made: dict[str, list[str]]
    cluster: ClusterDraft
    report: Report
    configs: dict[str, SoftwareShape] = field(default_factory=dict)
    deployments: dict[str, SoftwareShape] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)
    """Deployment -> its target (`element` or `element/part`)."""
    extra: dict[str, dict[str, IOType]] = field(default_factory=dict)
    """Config -> inputs deployments give that it does not declare (Heat passes them on)."""
    widened: dict[str, set[str]] = field(default_factory=dict)
    """Config -> declared inputs given literals of another type (Heat passes them as given)."""
    secrets: dict[str, str] = field(default_factory=dict)
    generated: dict[str, str] = field(default_factory=dict)
    """Secrets drawn here (RandomString) -> their mark (randomness.py)."""
    hidden: set[str] = field(default_factory=set)
    """Secrets that are hidden parameters."""
    in_group: bool = False
    """This template is a group's member (each replica would be its own Heat stack)."""
    mapped: bool = True
    prefix: str = ""
    """What this template's names are qualified with (its elements' prefix)."""
    used: set[str] = field(default_factory=set)
    """Configs its deployments apply."""
    fanned: dict[str, list[str]] = field(default_factory=dict)
    """A deployment group over several servers -> the per-server deployments it became."""
    origin: dict[str, str] = field(default_factory=dict)
    """Per-server deployment -> the deployment group it came from."""
    input_keys: dict[str, set[str | None]] = field(default_factory=dict)
    """Config -> the `input_key` of each deployment applying it (None: not a structured one)."""
    placed: Placed = field(default_factory=lambda: Placed({}, {}))
    """Where every template's resources ended up (a role's servers, for TripleO's style)."""
    shapes: dict[str, Shape] = field(default_factory=dict)
    networking: NetworkSpec | None = None
    """The cluster's own networking: a port's or balancer's address it gives is an input."""
    """Every template read, by scope (`through.shapes_by_scope`)."""

    def full(self, name: str) -> str:
        """A name of this template as a name of the cluster: `PREFIX-NAME` when nested."""
        return f"{self.prefix}-{name}" if self.prefix else name


def is_deployment(kind: str) -> bool:
    return kind.startswith("OS::Heat::") and kind.endswith(DEPLOYMENT_SUFFIXES)


def map_software(
    shape: Shape,
    placed: Placed,
    cluster: ClusterDraft,
    report: Report,
    networking: NetworkSpec | None = None,
) -> SoftwareSpec | None:
    """The software of every template read; None when there is none or it cannot be mapped."""
    sw = SoftwareDraft()
    mapped = True
    any_deployment = False
    by_scope: dict[str, dict[str, list[str]]] = {}
    for (sc, r), e in placed.elements.items():
        by_scope.setdefault(sc, {})[r] = e
    shapes = shapes_by_scope(shape)
    for scope, in_group in _scopes(shape):
        prefix = placed.prefixes.get(scope.scope)
        if prefix is None:
            continue  # not made into elements (e.g. a group inside a group): reported there
        made = by_scope.get(scope.scope, {})
        m = _Map(scope, made, cluster, report, prefix=prefix, in_group=in_group)
        m.placed, m.shapes, m.networking = placed, shapes, networking
        if _scope(m, sw):
            any_deployment = True
            mapped = mapped and m.mapped
    if not any_deployment or not mapped:
        return None
    before = len(report.out)
    check_software(sw, cluster, report.out)
    # Valid Heat, but containers Shoal will not run (documents/containers.py): counted as such.
    check_containers(sw.configs, sw.config_paths, partial(report.cannot, "container config"))
    if len(report.out) > before:
        return None
    return build_software(sw)


def _scopes(shape: Shape, in_group: bool = False) -> list[tuple[Shape, bool]]:
    """The template and every nested template and group member it uses, each with whether
    it is (inside) a group's member."""
    found = [(shape, in_group)]
    for n in shape.nested:
        found += _scopes(n.shape, in_group)
    for g in shape.groups:
        found += _scopes(g.member, True)
    return found


def _scope(m: _Map, sw: SoftwareDraft) -> bool:
    """Maps one template's software into `sw`; False when it has no deployment."""
    for s in m.shape.software:
        if is_deployment(s.kind):
            for one in _fan_out(m, s):
                if one.name in m.deployments:
                    _cannot(
                        m,
                        "two deployments with one name",
                        one.path,
                        f"'{one.name}' is also the name of a deployment group's per-server part",
                    )
                m.deployments[one.name] = one
        else:
            m.configs[s.name] = s
    if not m.deployments:
        return False
    for d in [d for d in m.deployments.values() if _over_nothing(m, d)]:
        # Heat makes no deployment for a group of none (a role switched off by a count of 0).
        del m.deployments[d.name]
        m.report.notice(
            child(d.path, "properties", "servers"),
            f"{d.kind} {d.name}: its servers are a group of count 0; nothing is deployed",
        )
    if not m.deployments:
        return False
    for d in m.deployments.values():
        target = _target(m, d)
        if target is not None:
            m.targets[d.name] = target
        else:
            m.mapped = False
    drafts = [_deployment(m, d) for d in m.deployments.values()]
    for name in sorted(m.used):
        config = _config(m, m.configs[name])
        if config is not None:
            sw.configs[m.full(name)] = config
            sw.config_paths[m.full(name)] = m.configs[name].path
    for draft in drafts:
        if any(x.name == draft.name for x in sw.deployments):
            _cannot(
                m,
                "two deployments with one name",
                draft.path,
                f"deployment '{draft.name}' is also the name of another template's deployment",
            )
        sw.deployments.append(draft)
    sw.secrets.update(m.secrets)
    sw.generated.update(m.generated)
    return True


def _fan_out(m: _Map, d: SoftwareShape) -> list[SoftwareShape]:
    """A deployment group over a map of several servers: one deployment per server."""
    inside = follow(m.shape, d.props.get("servers"), m.shapes)
    if isinstance(inside, NotRead):
        return [d]
    servers = inside.value
    if not isinstance(servers, dict) or len(servers) < 2:
        return [d]
    if not all(server_of(_home(m, v, inside.shape), v) is not None for v in servers.values()):
        return [d]
    out = []
    for key, ref in servers.items():
        name = f"{d.name}-{key}"
        if not is_name(name):
            _cannot(
                m,
                "a deployment or config name Shoal cannot use",
                child(d.path, "properties", "servers", str(key)),
                f"'{name}' (deployment {d.name} on server {key}) is not a valid name: {NAME_RULE}",
            )
            continue
        m.origin[name] = d.name
        out.append(replace(d, name=name, props={**d.props, "servers": {key: ref}}))
    m.fanned[d.name] = [o.name for o in out]
    return out


def _element(m: _Map, resource: str, scope: str | None = None) -> str | None:
    """What a server (or one-server group) of this template (or of the template read in
    `scope`) became: `element[/server]`."""
    elements = m.placed.elements.get((scope, resource), []) if scope else m.made.get(resource, [])
    if len(elements) != 1:
        return None
    name = elements[0]
    group = next((g for g in m.cluster.groups if g.name == name), None)
    if group is not None and any(p.part is not None for p in group.parts or []):
        return f"{name}/server"
    return name


def _over_nothing(m: _Map, d: SoftwareShape) -> bool:
    """A deployment group whose servers are a ResourceGroup of count 0 (left out as Heat
    leaves it unchecked, groups.py)."""
    if not d.kind.endswith("Group") and not d.kind.endswith("Deployments"):
        return False
    inside = follow(m.shape, d.props.get("servers"), m.shapes)
    if isinstance(inside, NotRead) or not isinstance(inside.value, Attr):
        return False
    return inside.value.name in inside.shape.empty_groups


def _target(m: _Map, d: SoftwareShape) -> str | None:
    where = child(d.path, "properties")
    if not d.kind.endswith("Group") and not d.kind.endswith("Deployments"):
        value = d.props.get("server")
        inside = follow(m.shape, value, m.shapes)
        if isinstance(inside, NotRead):
            _not_read(m, d, child(where, "server"), inside)
            return None
        server = server_of(inside.shape, inside.value)
        if server is not None:
            return _target_in(m, d, child(where, "server"), server, inside.shape)
        _cannot(
            m,
            "deployment to a server outside the template",
            child(where, "server"),
            f"{d.kind} {d.name}: 'server' must be get_resource of a server in this template",
        )
        return None
    at = child(where, "servers")
    inside = follow(m.shape, d.props.get("servers"), m.shapes)
    if isinstance(inside, NotRead):
        _not_read(m, d, at, inside)
        return None
    shape, value = inside.shape, inside.value
    refs = isinstance(value, Attr) and value.path in (("refs_map",), ("refs",))
    group = value.name if isinstance(value, Attr) and refs else None
    group = group or group_by_member_output(shape, value)
    if group is not None and group in {g.name for g in shape.groups}:
        if _outside_member(m, shape):
            return _target_in(m, d, at, group, shape)  # refused there
        target = _element(m, group, shape.scope)
        if target is not None:
            return target
        if not m.placed.elements.get((shape.scope, group)):
            # a count known only at run time: reported where the group was read
            m.mapped = False
            return None
        _cannot(
            m,
            "deployment group over a group of several servers",
            at,
            f"{d.kind} {d.name}: each member of {group} has several servers; Shoal "
            "targets one node group",
        )
        return None
    if isinstance(value, dict) and len(value) == 1:
        only = next(iter(value.values()))
        home = _home(m, only, shape)
        server = server_of(home, only)
        if server is not None:
            return _target_in(m, d, at, server, home)
    if inside.output is not None:
        _not_read(m, d, at, NotRead(f"the output's value {_shown(value)} as 'servers'"))
        return None
    _cannot(
        m,
        "deployment to servers outside the template",
        at,
        f"{d.kind} {d.name}: 'servers' must be get_attr [GROUP, refs_map] of a ResourceGroup "
        "of this template, or a map of this template's servers",
    )
    return None


def _target_in(m: _Map, d: SoftwareShape, at: str, resource: str, shape: Shape) -> str | None:
    """The element `resource` of `shape` became, as a deployment's target. In a group's member
    a server of the parent would get one deployment per member in Heat; Shoal makes one."""
    if _outside_member(m, shape):
        _cannot(
            m,
            "deployment in a group member on a server outside it",
            at,
            f"{d.kind} {d.name} in each member of a group targets {resource} outside the member; "
            "Heat makes one deployment per member, Shoal one per target",
        )
        return None
    return _element(m, resource, shape.scope)


def _home(m: _Map, value: object, shape: Shape) -> Shape:
    """The template `value` names a resource of: one server of a role's map (fanned out), or a
    parent's server passed in, is read where it was written."""
    return m.shapes.get(value.scope, shape) if isinstance(value, Ref | Attr) else shape


def _outside_member(m: _Map, shape: Shape) -> bool:
    return m.in_group and shape.scope not in shapes_by_scope(m.shape)


def _not_read(m: _Map, d: SoftwareShape, at: str, why: NotRead) -> None:
    """Valid Heat through a nested template's output that Shoal does not follow (yet)."""
    if why.unread:
        m.mapped = False
        return
    if why.wrong:
        m.report.problem(at, why.what)
        m.mapped = False
        return
    _cannot(
        m,
        "deployment to a nested template's output Shoal does not read",
        at,
        f"{d.kind} {d.name}: Shoal does not read {why.what} yet",
    )


def _shown(value: object) -> str:
    return json.dumps(to_json(shown(value)))


def _cannot(m: _Map, reason: str, path: str, message: str) -> None:
    """Valid Heat Shoal cannot map, counted under `reason`; the cluster gets no software."""
    m.report.cannot(reason, path, message)
    m.mapped = False


def _deployment(m: _Map, d: SoftwareShape) -> DeploymentDraft:
    draft = DeploymentDraft(m.full(d.name), d.path, target=m.targets.get(d.name))
    _named(m, d)
    where = child(d.path, "properties")
    config = d.props.get("config")
    if isinstance(config, Ref) and config.name in m.configs:
        if m.configs[config.name].kind in MAPPED_CONFIGS:
            draft.config = m.full(config.name)
            m.used.add(config.name)
            _input_key(m, d, m.configs[config.name])
        else:
            _cannot(
                m,
                f"deployment of a {m.configs[config.name].kind}",
                child(where, "config"),
                f"{m.configs[config.name].kind} is boot user data, not a deployable config",
            )
    else:
        _cannot(
            m,
            "deployment of a config outside the template",
            child(where, "config"),
            f"{d.kind} {d.name}: 'config' must be get_resource of a software config here",
        )
    values = d.props.get("input_values") or {}
    if isinstance(values, dict):
        for key, value in values.items():
            at = child(where, "input_values", str(key))
            source = _source(m, d, str(key), value, at)
            if source is not None:
                draft.inputs[str(key)] = Source(source, at, at)
                if isinstance(config, Ref) and config.name in m.used:
                    _declare(m, config.name, str(key), source)
    else:
        _cannot(
            m,
            "input_values known only at run time",
            child(where, "input_values"),
            "input_values must be a mapping known before the cluster exists",
        )
    written = m.shape.depends.get(m.origin.get(d.name, d.name), set())
    deps = sorted(x for n in written for x in m.fanned.get(n, [n]) if x in m.deployments)
    draft.depends_on = [(m.full(n), child(d.path, "depends_on")) for n in deps]
    draft.actions = _actions(m, d, child(where, "actions"))
    return draft


def _input_key(m: _Map, d: SoftwareShape, c: SoftwareShape) -> None:
    """Heat substitutes `get_input` (or the deployment's `input_key`) in a structured config
    only when a structured deployment applies it; STRICT wants every name given."""
    structured = d.kind.startswith(STRUCTURED) and c.kind == "OS::Heat::StructuredConfig"
    key = d.props.get("input_key", DEFAULT_INPUT_KEY) if structured else None
    if key is not None and not isinstance(key, str):
        return  # reported by software.py
    m.input_keys.setdefault(c.name, set()).add(key)
    if key is None or d.props.get("input_values_validate") != "STRICT":
        return
    values = d.props.get("input_values")
    given = set(values) if isinstance(values, dict) else set()
    given |= {str(i["name"]) for i in _list(c.props.get("inputs"))} | set(DERIVED_INPUTS)
    for name, at in _wanted(c.props.get("config"), key, child(c.path, "properties", "config")):
        if name not in given:
            m.report.problem(
                at,
                f"{d.kind} {d.name} validates its inputs STRICT, and gives no input '{name}'",
            )


def _wanted(body: object, key: str, path: str) -> list[tuple[str, str]]:
    """Each `{key: NAME}` in a structured config's body, with its pointer."""
    if isinstance(body, dict):
        arg = body.get(key)
        if len(body) == 1 and isinstance(arg, str):
            return [(arg, path)]
        return [x for k, v in body.items() for x in _wanted(v, key, child(path, str(k)))]
    if isinstance(body, list):
        return [x for i, v in enumerate(body) for x in _wanted(v, key, child(path, str(i)))]
    return []


def _source(m: _Map, d: SoftwareShape, key: str, value: object, at: str) -> InputSource | None:
    if key in d.secrets:
        param = m.full(d.secrets[key])
        if first_symbolic(value) is not None:
            _cannot(
                m,
                "hidden parameter known only at run time",
                at,
                f"input '{key}' is a hidden parameter whose value comes from resources at run time",
            )
            return None
        m.secrets[param] = value if isinstance(value, str) else json.dumps(to_json(value))
        m.hidden.add(param)
        return SecretInput(param)
    random = _random_of(m, value)
    if random is not None:
        return _random(m, random, at)
    if isinstance(value, Attr) and value.scope == m.shape.scope:
        inside = follow(m.shape, value, m.shapes)
        if isinstance(inside, NotRead) and (inside.wrong or inside.unread):
            if inside.wrong:
                m.report.problem(at, inside.what)
            m.mapped = False
            return None
        if isinstance(inside, NotRead):
            _cannot(
                m,
                "deployment input from a nested template's output Shoal does not read",
                at,
                f"input '{key}': Shoal does not read {inside.what} yet",
            )
            return None
        if inside.output in inside.shape.hidden_outputs:
            return _hidden_output(m, value.name, inside, key, at)
        if isinstance(inside.value, Attr) and inside.value.scope == inside.shape.scope:
            return _attr(m, d, inside.value, at, inside.shape)
        value = inside.value
    if first_symbolic(value) is None:
        return LiteralInput(to_json(value))
    _cannot(
        m,
        "deployment input known only at run time",
        at,
        f"input '{key}' is computed from resources at run time; Shoal takes a literal, a "
        "parameter, get_attr of a server's address or name, or of a deployment's output",
    )
    return None


def _hidden_output(m: _Map, role: str, inside: Inside, key: str, at: str) -> SecretInput | None:
    """A nested template's output that shows one of its hidden parameters: a secret, as the
    hidden parameter itself would be, never a literal in the cluster's views."""
    if first_symbolic(inside.value) is not None:
        _cannot(
            m,
            "hidden parameter known only at run time",
            at,
            f"input '{key}' is {role}'s output '{inside.output}', which shows a hidden "
            "parameter and is computed from resources at run time",
        )
        return None
    name = m.full(f"{role}-{inside.output}")
    value = inside.value
    m.secrets[name] = value if isinstance(value, str) else json.dumps(to_json(value))
    m.hidden.add(name)
    return SecretInput(name)


def _random_of(m: _Map, value: object) -> str | None:
    """The RandomString of this template `value` is (`get_resource` or `get_attr … value`)."""
    if not isinstance(value, Ref | Attr) or value.scope != m.shape.scope:
        return None
    if m.shape.kinds.get(value.name) != RANDOM_STRING:
        return None
    if isinstance(value, Attr) and value.path != ("value",):
        return None
    return value.name


def _random(m: _Map, name: str, at: str) -> SecretInput | None:
    """A RandomString's value as a secret, drawn once per reading (then kept, randomness.py)."""
    random = m.shape.randoms.get(name)
    full = m.full(name)
    if m.in_group:
        _cannot(
            m,
            "RandomString in a group member",
            at,
            f"{name} is drawn once per member of its group in Heat; Shoal keeps one secret per "
            "cluster",
        )
        return None
    if random is None and name in m.shape.randoms:
        m.mapped = False  # its properties were refused, and that reported
        return None
    if random is None:
        _cannot(
            m,
            "RandomString known only at run time",
            at,
            f"the properties of {name} come from resources at run time",
        )
        return None
    if full in m.hidden:
        _cannot(
            m,
            "RandomString named as a hidden parameter",
            at,
            f"'{full}' is both a RandomString and a hidden parameter; their secrets share names",
        )
        return None
    if full not in m.secrets:
        m.secrets[full] = generate(random)
        m.generated[full] = mark(random)
    return SecretInput(full)


def _address(m: _Map, value: Attr, attr: NetAttr, at: str) -> LiteralInput | NetworkFact | None:
    """A port's fixed IP, a floating IP's or a balancer's VIP the document gives: known before
    anything exists, so the input is that literal; one the cloud assigns is the `NetworkFact`,
    and the deployment waits until the engine recorded it (planning/software.py)."""
    fact = owned(m.networking, attr, value.name)
    kind = m.shape.kinds.get(value.name, "resource")
    if fact is None:
        _cannot(
            m,
            f"get_attr of {kind} not in the cluster's networking into a deployment input",
            at,
            f"{value.name} ({kind}) is not one of the cluster's own networking resources",
        )
        return None
    given = declared_address(m.networking or NetworkSpec(), fact)
    return fact if given is None else LiteralInput(given)


def _attr(
    m: _Map, d: SoftwareShape, value: Attr, at: str, shape: Shape | None = None
) -> LiteralInput | NodeFactInput | MemberFactsInput | OutputInput | NetworkFact | None:
    """`value` read in `shape` (this template, or a nested one whose output it is)."""
    shape = shape or m.shape
    here = shape is m.shape
    address = net_attr(shape.kinds.get(value.name, ""), value.path) if here else None
    if address is not None:
        return _address(m, value, address, at)
    first = str(value.path[0]) if value.path else ""
    if here and value.name in m.deployments and len(value.path) == 1:
        own = m.targets.get(d.name)
        other = m.targets.get(value.name)
        one_node = other is not None and not any(
            g.name == MemberRef.parse(other).target for g in m.cluster.groups
        )
        scope = OutputScope.NODE if own == other or one_node else OutputScope.ALL
        return OutputInput(m.full(value.name), first, scope)
    is_server = value.name in {s.name for s in shape.servers}
    is_group = value.name in {g.name for g in shape.groups}
    path = value.path[1:] if is_group and first == "attributes" else value.path
    fact = _fact(str(path[0]) if path else "")
    within = None if here else shape.scope
    member = _element(m, value.name, within) if is_server or is_group else None
    if here and value.name in m.fanned:
        _cannot(
            m,
            "output of a deployment group over several servers",
            at,
            f"{value.name} runs on several servers as separate deployments; take the output "
            "from a deployment group over a ResourceGroup instead",
        )
        return None
    if fact is None or member is None:
        kind = shape.kinds.get(value.name, "resource")
        _cannot(
            m,
            f"get_attr of {kind} into a deployment input",
            at,
            f"get_attr {'.'.join([value.name, *map(str, value.path)])} ({kind}) has no Shoal "
            "counterpart; Shoal takes a server's or group's address or name, or a "
            "deployment's output",
        )
        return None
    if is_server and member == m.targets.get(d.name):
        return NodeFactInput(fact)
    if is_server and not any(g.name == MemberRef.parse(member).target for g in m.cluster.groups):
        if m.targets.get(d.name) is None:
            return None  # the deployment's own target was not found, and that reported
        _cannot(
            m,
            "another server's attribute as text",
            at,
            f"{value.name}'s {fact.value} is given to a deployment on another server; Shoal gives "
            "other members' facts as a list (MemberFactsInput), not a single value",
        )
        return None
    return MemberFactsInput(MemberRef.parse(member), fact)


def _fact(attr: str) -> NodeFact | None:
    if attr in _ADDRESS_ATTRS:
        return NodeFact.ADDRESS
    if attr == "name":
        return NodeFact.NAME
    return None


def _declare(m: _Map, config: str, key: str, source: object) -> None:
    declared = {
        str(i["name"]): i.get("type", "String")
        for i in _list(m.configs[config].props.get("inputs"))
    }
    if key in declared:
        if isinstance(source, LiteralInput) and not _heat_fits(source.value, declared[key]):
            m.widened.setdefault(config, set()).add(key)
        return
    kind = IOType.JSON
    if isinstance(source, LiteralInput) and isinstance(source.value, str):
        kind = IOType.STRING
    if isinstance(source, SecretInput | NodeFactInput):
        kind = IOType.STRING
    m.extra.setdefault(config, {})[key] = kind


def _heat_fits(value: Json, declared: object) -> bool:
    """Whether a literal is of its declared type; Heat never checks, so a misfit widens to Json."""
    if value is None or declared == "Json":
        return True
    if declared in ("String", "Number"):
        return isinstance(value, str | int | float) and (
            declared == "String" or not isinstance(value, str) or _is_number(value)
        )
    if declared == "CommaDelimitedList":
        return isinstance(value, str | list)
    if declared == "Boolean":
        return isinstance(value, bool) or str(value).lower() in ("true", "false", "1", "0")
    return True


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _actions(m: _Map, d: SoftwareShape, at: str) -> frozenset[DeployAction]:
    raw = d.props.get("actions", ["CREATE", "UPDATE"])
    names = [str(a) for a in raw] if isinstance(raw, list) else []
    kept = frozenset(DeployAction(a) for a in names if a in {x.value for x in DeployAction})
    dropped = [a for a in names if a in _HEAT_ONLY_ACTIONS]
    if dropped:
        m.report.notice(at, f"actions {', '.join(dropped)} are Heat's; Shoal does not suspend")
    if not kept:
        _cannot(m, "deployment on SUSPEND/RESUME only", at, "Shoal runs on CREATE, UPDATE, DELETE")
    return kept or frozenset({DeployAction.CREATE})


def _named(m: _Map, s: SoftwareShape) -> None:
    if not is_name(s.name):
        _cannot(
            m,
            "a deployment or config name Shoal cannot use",
            s.path,
            f"'{s.name}' is not a valid name for a {s.kind}: {NAME_RULE}",
        )


def _config(m: _Map, c: SoftwareShape) -> SoftwareConfig | None:
    where = child(c.path, "properties")
    _named(m, c)
    group = c.props.get("group", "Heat::Ungrouped")
    hook = _HOOKS.get(group) if isinstance(group, str) else None
    if hook is None:
        _cannot(
            m,
            f"software config group {group}",
            child(where, "group"),
            f"group {json.dumps(to_json(group))} is not a hook Shoal runs; one of "
            f"{', '.join(_HOOKS)}",
        )
    body = c.props.get("config")
    text: str | None = None
    if first_symbolic(body) == BROKEN:
        m.mapped = False  # a problem inside it (a missing get_file) is reported where it is
    elif first_symbolic(body) is not None:
        _cannot(
            m,
            "software config known only at run time",
            child(where, "config"),
            "the config body is computed from resources at run time",
        )
    elif body is None or isinstance(body, str):
        text = body or ""
    else:
        text = json.dumps(to_json(body), sort_keys=True)
    wide = m.widened.get(c.name, set())
    inputs = [_input(i, i["name"] in wide) for i in _list(c.props.get("inputs"))]
    have = {i.name for i in inputs}
    inputs += [ConfigInput(k, t) for k, t in m.extra.get(c.name, {}).items() if k not in have]
    outputs = [_output(o) for o in _list(c.props.get("outputs"))]
    options = to_json(c.props.get("options") or {})
    keys = m.input_keys.get(c.name, set())
    if len(keys) > 1:
        _cannot(
            m,
            "a structured config deployed with different input_keys",
            where,
            f"{c.name} is applied by deployments with different input_key (or by a "
            "SoftwareDeployment, which substitutes nothing); Shoal keeps one per config",
        )
        return None
    input_key = next(iter(keys), None)
    if hook is None or text is None:
        return None
    return SoftwareConfig(
        m.full(c.name),
        hook,
        text,
        tuple(inputs),
        tuple(outputs),
        options if isinstance(options, dict) else {},
        input_key,
    )


def _list(value: object) -> list[dict[str, object]]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, dict) and isinstance(v.get("name"), str)]


def _input(item: dict[str, object], wide: bool) -> ConfigInput:
    default: Json = to_json(item.get("default"))
    return ConfigInput(
        str(item["name"]),
        IOType.JSON if wide else _IO.get(str(item.get("type", "String")), IOType.STRING),
        default,
        str(item.get("description") or ""),
    )


def _output(item: dict[str, object]) -> ConfigOutput:
    return ConfigOutput(
        str(item["name"]),
        _IO.get(str(item.get("type", "String")), IOType.STRING),
        item.get("error_output") is True,
        str(item.get("description") or ""),
    )

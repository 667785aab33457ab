"""One HOT template read in one scope: sections, parameters, conditions, resources, outputs.

A `Stack` is the top template or a nested one (a registry type, a ResourceGroup member). It
checks the template's structure, gives its functions their parameters, conditions and
resources (it is their `Scope`), runs each resource's handler on its evaluated properties, and
evaluates the outputs. Dependencies, explicit and through `get_resource`/`get_attr`, are kept
for the cluster's `depends_on`; a dependency cycle is a problem naming its members.
"""

from __future__ import annotations

from collections.abc import Callable

from shoal.documents.collect import child
from shoal.documents.hot import compute, groups, heat, neutron, senlin, software, workloads
from shoal.documents.hot.context import MAX_NESTING, Context, Resource
from shoal.documents.hot.environment import is_file_ref, lookup
from shoal.documents.hot.functions import (
    BROKEN,
    MAX_TOTAL_RESOURCES,
    NOWHERE,
    Evaluator,
    call_of,
    plain,
    step_into,
)
from shoal.documents.hot.heat_types import HEAT_TYPES
from shoal.documents.hot.outputs import hidden_in, partial
from shoal.documents.hot.parameters import MISSING, Parameter, check, convert, read_parameters
from shoal.documents.hot.paths import file_pointer
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import NestedShape, OutputShape, ServerGroupShape, Shape
from shoal.documents.hot.values import Attr, Ref, Unknown, shown
from shoal.documents.hot.versions import KNOWN_NAMES, VERSIONS, Version, version_of
from shoal.documents.tree import describe
from shoal.model.enums import Rule
from shoal.model.problems import InvalidDocument

Handler = Callable[["Stack", Resource, dict[str, object]], None]

HANDLERS: dict[str, Handler] = {
    "OS::Nova::Server": compute.server,
    "OS::Cinder::Volume": compute.volume,
    "OS::Cinder::VolumeAttachment": compute.attachment,
    "OS::Nova::ServerGroup": compute.server_group,
    "OS::Heat::ResourceGroup": groups.resource_group,
    "OS::Heat::None": heat.none,
    "OS::Heat::Value": heat.value,
    "OS::Heat::RandomString": heat.random_string,
    "OS::Heat::TestResource": heat.test_resource,
    "OS::Heat::SoftwareConfig": software.config,
    "OS::Heat::StructuredConfig": software.config,
    "OS::Heat::CloudConfig": software.boot_config,
    "OS::Heat::MultipartMime": software.boot_config,
    "OS::Heat::SoftwareDeployment": software.deployment,
    "OS::Heat::SoftwareDeployments": software.deployment,
    "OS::Heat::SoftwareDeploymentGroup": software.deployment,
    "OS::Heat::StructuredDeployment": software.deployment,
    "OS::Heat::StructuredDeployments": software.deployment,
    "OS::Heat::StructuredDeploymentGroup": software.deployment,
    "OS::Senlin::Profile": senlin.profile,
    "OS::Senlin::Cluster": senlin.cluster,
    "OS::Senlin::Node": senlin.node,
    "OS::Senlin::Policy": senlin.policy,
    workloads.TYPE: workloads.workload,
    **neutron.HANDLERS,
}

_SECTIONS = {
    "heat_template_version",
    "description",
    "parameter_groups",
    "parameters",
    "resources",
    "outputs",
}
_RESOURCE_KEYS = {
    "type",
    "properties",
    "metadata",
    "depends_on",
    "deletion_policy",
    "update_policy",
    "description",
}
_DELETION = ("Delete", "Retain", "Snapshot", "delete", "retain", "snapshot")
MAX_RESOURCES = 5_000
RESOURCE_STEPS = 100
"""What reading one resource costs of the shared step budget."""
_NO_NODES = ("OS::Heat::Value", "OS::Heat::RandomString", "OS::Heat::TestResource")


class Stack:
    def __init__(
        self,
        ctx: Context,
        tree: object,
        *,
        scope: str,
        path: str,
        given: dict[str, object],
        given_path: Callable[[str], str],
        top: bool,
        depth: int = 0,
        uid: str | None = None,
        skip: frozenset[str] = frozenset(),
    ) -> None:
        self.ctx = ctx
        self.skip = skip
        """Registry entries not applied here (the types that were mapped to this template)."""
        self.report: Report = ctx.report
        self.scope = scope
        self.path = path
        self.depth = depth
        self.uid = uid or f"{scope}#{path}"
        """Unique per use of a template: two uses of one nested file are two scopes."""
        self.shape = Shape(self.uid)
        self.tree = plain(tree)
        self._given = given
        self._given_path = given_path
        self._top = top
        self.version: Version = VERSIONS["2013-05-23"]
        self.params: dict[str, Parameter] = {}
        self._values: dict[str, object] = {}
        self._conditions: dict[str, object] = {}
        self._condition_values: dict[str, bool | None] = {}
        self._resolving: set[str] = set()
        self._cycles: list[str] = []
        """Conditions found in a circular definition, in the order found."""
        self._resources: dict[str, Resource] = {}
        self._props: dict[str, dict[str, object] | None] = {}
        self._active: dict[str, bool] = {}
        self._busy: set[str] = set()

    # --- reading ----------------------------------------------------------------------

    def read(self) -> Shape:
        t = self.tree
        if not isinstance(t, dict):
            self.report.problem(self.path, f"a template must be a mapping, found {describe(t)}")
            return self.shape
        raw_version = t.get("heat_template_version")
        version = version_of(raw_version)
        if version is None:
            self.report.problem(
                child(self.path, "heat_template_version"),
                f"unknown heat_template_version {describe(raw_version)}; "
                f"known: {', '.join(KNOWN_NAMES)}",
            )
            return self.shape
        self.version = version
        sections = _SECTIONS | ({"conditions"} if version.has_conditions else set())
        for key in t:
            if key not in sections:
                hint = " (conditions need 2016-10-14 or later)" if key == "conditions" else ""
                self.report.problem(
                    child(self.path, str(key)), f"'{key}' is not a template section{hint}"
                )
        self.params = read_parameters(
            t.get("parameters"),
            child(self.path, "parameters"),
            self.report,
            modulo=version.at_least("2017-02-24"),
        )
        self._check_given()
        self._parameter_groups(t.get("parameter_groups"), child(self.path, "parameter_groups"))
        conditions = t.get("conditions") if version.has_conditions else None
        if conditions is not None and not isinstance(conditions, dict):
            self.report.problem(child(self.path, "conditions"), "'conditions' must be a mapping")
        elif conditions:
            for key in conditions:
                if not isinstance(key, str):  # Heat fails on it (a TypeError joining its path)
                    self.report.problem(
                        child(self.path, "conditions", str(key)),
                        f"a condition's name must be text, found {describe(key)} (YAML reads "
                        "on, off, yes, no, true and false unquoted as booleans)",
                    )
            self._conditions = {k: v for k, v in conditions.items() if isinstance(k, str)}
        self._read_resources(t.get("resources"))
        for name in self._values_in_order():
            if self.active(name):
                self.properties_of(name)
        for name in self._resources:
            self._build(name)
        self._dependencies()
        self._outputs(t.get("outputs"))
        for name, p in self.params.items():  # Heat checks every parameter, used or not
            self.param(name, p.path)
        self._unused_conditions()
        return self.shape

    def _unused_conditions(self) -> None:
        """Conditions nothing asked for. Heat resolves a condition only when something uses
        it, but checks every definition's form and functions; Shoal checks those too, and
        also refuses a circular definition nothing uses (docs/hot.md, deliberate
        differences); any other problem of an unused condition is Heat's to ignore."""
        for name in self._conditions:
            if name in self._condition_values:
                continue
            where = child(self.path, "conditions", name)
            if not self._definition_ok(name, where):
                self._condition_values[name] = None
                continue
            cycles = len(self._cycles)
            real, self.report = self.report, Report()
            try:
                self.condition(name, where)
            finally:
                self.report = real
            for cycle in self._cycles[cycles:]:
                self.report.problem(
                    child(self.path, "conditions", cycle),
                    f'circular definition for condition "{cycle}"',
                )

    def _definition_ok(self, name: str, where: str) -> bool:
        """A definition is a boolean or a condition function (Heat: "The definition of
        condition ... is invalid"), using only condition functions."""
        raw = plain(self._conditions[name])
        if not isinstance(raw, bool) and call_of(raw) is None:
            self.report.problem(
                where, f'the definition of condition "{name}" is invalid: {describe(raw)}'
            )
            return False
        return Evaluator(self, self.report, self.ctx.budget).only_condition_functions(raw, where)

    def _check_given(self) -> None:
        if self._top:
            for name in self.ctx.env.parameters:
                if name not in self.params:
                    self.report.problem(
                        self.ctx.env.given_at.get(name, ""),
                        f"an environment gives parameter '{name}', "
                        f"but the template has no parameter '{name}'",
                    )
        for name in self._given:
            if name not in self.params:
                self.report.problem(
                    self._given_path(name), f"the template has no parameter '{name}'"
                )

    def _parameter_groups(self, value: object, path: str) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            self.report.problem(path, "parameter_groups is a list")
            return
        seen: set[str] = set()
        for i, group in enumerate(value):
            names = group.get("parameters") if isinstance(group, dict) else None
            if not isinstance(names, list):
                self.report.problem(child(path, i), "a parameter group needs a 'parameters' list")
                continue
            for j, name in enumerate(names):
                if name not in self.params:
                    self.report.problem(
                        child(path, i, "parameters", j), f"unknown parameter {describe(name)}"
                    )
                elif name in seen:
                    self.report.problem(
                        child(path, i, "parameters", j),
                        f"parameter '{name}' is in more than one group",
                    )
                seen.add(str(name))

    def _read_resources(self, value: object) -> None:
        where = child(self.path, "resources")
        if value is None:
            return
        if not isinstance(value, dict):
            self.report.problem(where, f"'resources' must be a mapping, found {describe(value)}")
            return
        if len(value) > MAX_RESOURCES:
            self.report.problem(where, f"{len(value)} resources; the limit is {MAX_RESOURCES}")
            return
        self.ctx.budget.resources -= len(value)
        if not self.ctx.budget.spend(len(value) * RESOURCE_STEPS) or self.ctx.budget.resources < 0:
            if self.ctx.budget.first_overrun():
                self.report.problem(
                    where,
                    f"the template and its nested templates hold more than "
                    f"{MAX_TOTAL_RESOURCES} resources in all (as Heat's max_resources_per_stack)",
                )
            return
        keys = _RESOURCE_KEYS | (
            {"condition", "external_id"} if self.version.has_conditions else set()
        )
        for name, body in value.items():
            path = child(where, str(name))
            if "/" in str(name):
                self.report.problem(path, "a resource name may not contain '/' (as in Heat)")
                continue
            if str(name) in self.params:
                self.report.problem(
                    path, f"'{name}' names both a parameter and a resource (Heat refuses that)"
                )
            if not isinstance(body, dict):
                self.report.problem(
                    path, f"a resource must be a mapping with a 'type', found {describe(body)}"
                )
                continue
            for key in body:
                if key not in keys:
                    self.report.problem(child(path, str(key)), f"'{key}' is not a resource key")
            written = body.get("type")
            if not isinstance(written, str) or not written:
                self.report.problem(path, f"resource {name} needs a 'type'")
                continue
            final, _ = lookup(self.ctx.env, written, str(name), self.skip)
            self._resources[str(name)] = Resource(str(name), final, written, path, body)
            self.shape.kinds[str(name)] = final
        for res in self._resources.values():
            self._depends_on(res)

    def _depends_on(self, res: Resource) -> None:
        raw = res.raw.get("depends_on")
        names = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
        if raw is not None and not isinstance(raw, str | list):
            self.report.problem(
                child(res.path, "depends_on"), "depends_on is a name or a list of names"
            )
        deps = self.shape.depends.setdefault(res.name, set())
        for i, dep in enumerate(names):
            where = (
                child(res.path, "depends_on", i)
                if isinstance(raw, list)
                else child(res.path, "depends_on")
            )
            if not isinstance(dep, str) or dep not in self._resources:
                self.report.problem(where, f"depends_on names unknown resource {describe(dep)}")
            elif dep == res.name:
                self.report.problem(where, f"resource {dep} depends on itself")
            else:
                deps.add(dep)
        deps |= {r for r in _references(res.raw.get("properties")) if r in self._resources}
        deps.discard(res.name)
        policy = res.raw.get("deletion_policy")
        if policy is not None and policy not in _DELETION:
            self.report.problem(
                child(res.path, "deletion_policy"), "deletion_policy is Delete, Retain or Snapshot"
            )

    def _values_in_order(self) -> list[str]:
        """The template's `OS::Heat::Value`s, each after the Values it refers to: evaluated in
        this order, a `get_attr` of one finds the other done, so a chain of a thousand of
        them written last-first is read without nesting a thousand evaluations."""
        values = {n for n, r in self._resources.items() if r.type == "OS::Heat::Value"}
        order: list[str] = []
        seen: set[str] = set()
        for start in sorted(values):
            if start in seen:
                continue
            seen.add(start)
            stack = [(start, iter(sorted(self.shape.depends.get(start, ()))))]
            while stack:
                name, deps = stack[-1]
                nxt = next((d for d in deps if d in values and d not in seen), None)
                if nxt is None:
                    stack.pop()
                    order.append(name)
                else:
                    seen.add(nxt)
                    stack.append((nxt, iter(sorted(self.shape.depends.get(nxt, ())))))
        return order

    def active(self, name: str) -> bool:
        """False for a resource switched off by its `condition`."""
        if name not in self._active:
            res = self._resources[name]
            cond = res.raw.get("condition")
            ok: bool | None = True
            if cond is not None:
                ok = Evaluator(self, self.report, self.ctx.budget).decide(
                    plain(cond), child(res.path, "condition")
                )
            self._active[name] = ok is not False
        return self._active[name]

    def properties_of(self, name: str) -> dict[str, object] | None:
        """The evaluated properties of resource `name` (evaluated once)."""
        if name in self._props:
            return self._props[name]
        if name in self._busy:
            self.report.problem(self._resources[name].path, f"resource {name} refers to itself")
            return None
        self._busy.add(name)
        res = self._resources[name]
        raw = res.raw.get("properties")
        where = child(res.path, "properties")
        value = (
            Evaluator(self, self.report, self.ctx.budget).ev(raw, where) if raw is not None else {}
        )
        self._busy.discard(name)
        props: dict[str, object] | None
        if isinstance(value, dict):
            props = {str(k): v for k, v in value.items()}
        else:
            if value != BROKEN:
                self.report.problem(where, f"properties must be a mapping, found {describe(value)}")
            props = None
        self._props[name] = props
        return props

    def path_of(self, name: str) -> str:
        return self._resources[name].path

    def _build(self, name: str) -> None:
        res = self._resources[name]
        if not self.active(name):
            return
        if res.raw.get("external_id") is not None:
            self.report.cannot(
                "external_id (an existing resource)",
                child(res.path, "external_id"),
                "a resource adopted by external_id is not supported: Shoal manages what it creates",
            )
            return
        props = self.properties_of(name)
        if props is None:
            return
        self.shape.props[name] = props
        self.run(res, res.type, props, res.path)

    def run(self, res: Resource, kind: str, props: dict[str, object], path: str) -> None:
        """Build resource `res` as type `kind` (already through the registry)."""
        handler = HANDLERS.get(kind)
        if handler is not None:
            handler(self, res, props)
            return
        if is_file_ref(kind) or kind in self.ctx.files.given:
            shape = self.nested(res, kind, props, path)
            if shape is not None:
                self.shape.nested.append(NestedShape(res.name, res.path, shape))
            return
        via = f" (mapped from {res.written} by the environment)" if kind != res.written else ""
        if kind not in HEAT_TYPES:
            self.report.problem(
                child(path, "type"),
                f"resource type {kind}{via} is not a Heat resource type and the environment's "
                "resource_registry does not map it (Heat: could not be found)",
            )
            return
        self.report.cannot(
            f"type {kind}",
            child(path, "type"),
            f"Shoal does not read resource type {kind}{via} yet (docs/hot.md lists the types "
            "it reads)",
        )

    def member(self, res: Resource, kind: str, props: dict[str, object], path: str) -> Shape | None:
        """The shape of one member of a group (ResourceGroup, Senlin cluster) of type `kind`."""
        final, _ = lookup(self.ctx.env, kind, None, self.skip)
        if final == "OS::Heat::None":
            return Shape(self.scope)
        inner = Stack(
            self.ctx,
            {},
            scope=self.scope,
            path=path,
            given={},
            given_path=lambda n: path,
            top=False,
            depth=self.depth,
            skip=self.skip,
        )
        inner.version = self.version
        inner.uid = self.uid
        inner.shape = Shape(self.uid)
        inner._resources = self._resources
        fake = Resource(res.name, final, kind, path, {"properties": props})
        if final in ("OS::Nova::Server", "OS::Cinder::Volume", *_NO_NODES):
            inner.run(fake, final, props, path)
            return inner.shape
        if HANDLERS.get(final) is None and (is_file_ref(final) or final in self.ctx.files.given):
            return self.nested(fake, final, props, path)
        via = f" (mapped from {kind})" if final != kind else ""
        if final not in HEAT_TYPES:
            self.report.problem(
                child(path, "type"),
                f"resource type {final}{via} is not a Heat resource type and the environment's "
                "resource_registry does not map it (Heat: could not be found)",
            )
            return None
        self.report.cannot(
            f"type {final} in a group",
            child(path, "type"),
            f"a group of {final}{via} is not supported; "
            "a group's member is a server or a nested template",
        )
        return None

    def nested(
        self, res: Resource, target: str, props: dict[str, object], path: str
    ) -> Shape | None:
        """The shape of the nested template `target`, given `props` as its parameters."""
        if self.depth + 1 > MAX_NESTING:
            self.report.problem(path, f"templates nest deeper than {MAX_NESTING} levels")
            return None
        base = self.ctx.env.origin.get(target, self.scope) if target != res.written else self.scope
        found = self.ctx.files.read(target, base) or self.ctx.files.read(target, self.scope)
        if found is None:
            self.report.problem(
                child(path, "type"),
                f"the nested template '{target}' was not given (add it to 'files')",
            )
            return None
        name, text = found
        try:
            tree = self.ctx.files.tree(name, text)
        except InvalidDocument as bad:
            for p in bad.problems:
                self.report.problem(child(path, "type"), f"{name}: {p.message}")
            return None
        where = child(path, "properties")
        inner = Stack(
            self.ctx,
            tree,
            scope=name,
            path=file_pointer(self.ctx.files.relative(name)),
            given=props,
            given_path=lambda n: child(where, n),
            top=False,
            depth=self.depth + 1,
            uid=f"{self.uid}>{path}",
            skip=self.skip | {res.written} if target != res.written else self.skip,
        )
        return inner.read()

    def bind_policy(self, policy: str, cluster: str, path: str) -> None:
        props = self.properties_of(policy) or {}
        kind = props.get("type")
        if not isinstance(kind, str) or not kind.startswith("senlin.policy.affinity"):
            return
        inner = props.get("properties")
        sg = inner.get("servergroup") if isinstance(inner, dict) else None
        pol = sg.get("policies") if isinstance(sg, dict) else None
        word = (
            pol[0]
            if isinstance(pol, list) and pol
            else pol
            if isinstance(pol, str)
            else "anti-affinity"
        )
        rule = {r.value: r for r in Rule}.get(str(word))
        if rule is None:
            self.report.problem(path, f"unknown affinity policy {describe(word)}")
            return
        if not any(g.name == policy for g in self.shape.server_groups):
            self.shape.server_groups.append(ServerGroupShape(policy, self.path_of(policy), rule))
        for g in self.shape.groups:
            if g.name == cluster:
                for s in g.member.servers:
                    s.group = Ref(policy, self.uid)

    # --- Scope, for the functions ---------------------------------------------------------

    @property
    def name(self) -> str:
        return self.uid

    def param(self, name: str, path: str) -> object:
        if name in self._values:
            return self._values[name]
        pseudo = {
            "OS::stack_name": self.ctx.stack_name
            if self._top
            else Unknown("a nested stack's name"),
            "OS::stack_id": Unknown("the stack id"),
            "OS::project_id": Unknown("the project id"),
        }
        if name in pseudo:
            return pseudo[name]
        p = self.params.get(name)
        if p is None:
            self.report.problem(path, f"unknown parameter '{name}'")
            self._values[name] = BROKEN
            return BROKEN
        env = self.ctx.env
        value: object = MISSING
        where = p.path
        if name in self._given:
            value, where = self._given[name], self._given_path(name)
        elif self._top and name in env.parameters:
            value, where = env.parameters[name], env.given_at.get(name, p.path)
        elif name in env.parameter_defaults:
            value, where = env.parameter_defaults[name], env.default_at.get(name, p.path)
        if value is not MISSING and value is not None:
            value = convert(p, value, where, self.report)
            if value is not MISSING and not check(p, value, where, self.report):
                value = MISSING
            if value is MISSING:
                value = BROKEN
        elif p.default is not MISSING:
            value = p.default
        else:
            self.report.problem(
                p.path,
                f"parameter '{name}' needs a value: give it in an environment's parameters or "
                "parameter_defaults, or a default",
            )
            value = BROKEN
        self._values[name] = value
        return value

    @property
    def is_top(self) -> bool:
        return self._top

    def has_resource(self, name: str) -> bool:
        return name in self._resources

    def type_of(self, name: str) -> str | None:
        res = self._resources.get(name)
        return res.type if res is not None else None

    def attribute(self, resource: str, path: tuple[object, ...]) -> object:
        res = self._resources[resource]
        if res.type == "OS::Heat::Value" and path and path[0] == "value" and self.active(resource):
            props = self.properties_of(resource) or {}
            value, why = heat.typed(props) if "value" in props else (BROKEN, None)
            if why is not None:
                return BROKEN  # the Value's own problem, reported where it is
            for key in path[1:]:
                value = step_into(value, key)
                if value is NOWHERE:
                    return Attr(resource, self.uid, path)
            return value
        if res.type == "OS::Heat::TestResource" and path == ("output",) and self.active(resource):
            props = self.properties_of(resource) or {}
            return props.get("value", "test_string")  # what the resource stored, as in Heat
        return Attr(resource, self.uid, path)

    def condition(self, name: str, path: str) -> bool | None:
        if name in self._condition_values:
            return self._condition_values[name]
        if name not in self._conditions:
            self.report.problem(path, f"unknown condition '{name}'")
            return None
        where = child(self.path, "conditions", name)
        if name in self._resolving:
            # Heat: Condition validation error: Circular definition for condition "a"
            self._cycles.append(name)
            self.report.problem(where, f'circular definition for condition "{name}"')
            return None
        self._resolving.add(name)
        try:
            value = self._resolve_condition(name, where)
        finally:
            self._resolving.discard(name)
        self._condition_values[name] = value
        return value

    def _resolve_condition(self, name: str, where: str) -> bool | None:
        if not self._definition_ok(name, where):
            return None
        raw = plain(self._conditions[name])
        return Evaluator(self, self.report, self.ctx.budget).truth(raw, where, named=False)

    def file(self, name: str) -> str | None:
        found = self.ctx.files.read(name, self.scope)
        return found[1] if found is not None else None

    # --- after the resources ----------------------------------------------------------------

    def _dependencies(self) -> None:
        graph = self.shape.depends
        state: dict[str, int] = {}
        stack: list[str] = []
        reported: set[frozenset[str]] = set()

        def visit(n: str) -> None:
            state[n] = 1
            stack.append(n)
            for m in sorted(graph.get(n, ())):
                if state.get(m) == 1:
                    cycle = stack[stack.index(m) :]
                    key = frozenset(cycle)
                    if key not in reported:
                        reported.add(key)
                        self.report.problem(
                            self._resources[m].path,
                            "dependency cycle: " + " -> ".join([*cycle, m]),
                        )
                elif m not in state:
                    visit(m)
            stack.pop()
            state[n] = 2

        for n in sorted(graph):
            if n not in state:
                visit(n)

    def _outputs(self, value: object) -> None:
        where = child(self.path, "outputs")
        if value is None:
            return
        if not isinstance(value, dict):
            self.report.problem(where, "'outputs' must be a mapping")
            return
        for name, body in value.items():
            path = child(where, str(name))
            if not isinstance(body, dict) or "value" not in body:
                self.report.problem(path, "an output is a mapping with a 'value'")
                continue
            for key in body:
                if key not in ("value", "description", "condition"):
                    # Heat ignores other keys of an output.
                    self.report.notice(
                        child(path, str(key)), f"'{key}' is not an output key; ignored"
                    )
            cond = body.get("condition")
            if (
                cond is not None
                and Evaluator(self, self.report, self.ctx.budget).decide(
                    cond, child(path, "condition")
                )
                is False
            ):
                continue
            value = Evaluator(self, self.report, self.ctx.budget).ev(
                body["value"], child(path, "value")
            )
            self.shape.outputs[str(name)] = shown(value)
            self.shape.evaluated[str(name)] = value
            hidden = {p.name for p in self.params.values() if p.hidden}
            if hidden_in(body["value"], hidden) is not None:
                self.shape.hidden_outputs.add(str(name))
            if self._top:
                # again, keeping the text built around run-time values, for the cluster; its
                # problems were reported just above
                quiet = Evaluator(self, Report(), self.ctx.budget)
                hidden = {p.name for p in self.params.values() if p.hidden}
                description = body.get("description")
                self.shape.output_values.append(
                    OutputShape(
                        str(name),
                        path,
                        partial(quiet, hidden, body["value"], child(path, "value")),
                        description if isinstance(description, str) else "",
                    )
                )


def _references(value: object) -> set[str]:
    """Resources named by get_resource / get_attr anywhere in `value` (an implicit dependency)."""
    found: set[str] = set()
    call = call_of(value)
    if call is not None:
        name, args = call
        if name == "get_resource" and isinstance(args, str):
            found.add(args)
        elif name == "get_attr" and isinstance(args, list) and args and isinstance(args[0], str):
            found.add(args[0])
    if isinstance(value, dict):
        for v in value.values():
            found |= _references(v)
    elif isinstance(value, list):
        for v in value:
            found |= _references(v)
    return found

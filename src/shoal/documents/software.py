"""The `software` section of a native document: configs and deployments (docs/software.md).

    software:
      configs:
        NAME: {group: script, config: "...", inputs: [...], outputs: [...], options: {...}}
      deployments:
        NAME: {config, target: GROUP | GROUP/PART | INSTANCE, inputs: {NAME: SOURCE},
               depends_on: [...], actions: [CREATE, UPDATE, DELETE], quorum, retries, timeout}

Each config and deployment is read on its own (a broken one never hides the others); the
checks across them and against the cluster (unknown names, undeclared inputs, type mismatches,
cycles) live in `software_checks.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import NAME_RULE, is_name
from shoal.documents.params import MAX_VALUE_DEPTH, ParameterTable, to_json, too_deep
from shoal.documents.software_sources import Source, read_source
from shoal.documents.tree import describe, is_list, is_mapping, quote
from shoal.model.members import MemberRef
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    DeployAction,
    Deployment,
    HookGroup,
    IOType,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)

MAX_CONFIGS = 500
MAX_DEPLOYMENTS = 1_000
MAX_IO = 200
"""Declared inputs or outputs of one config, and inputs given to one deployment."""
MAX_CONFIG_BYTES = 1 << 20
MAX_RETRIES = 100
MAX_TIMEOUT_S = 86_400.0
DEFAULT_ACTIONS = frozenset({DeployAction.CREATE, DeployAction.UPDATE})


@dataclass(slots=True)
class DeploymentDraft:
    name: str
    path: str
    config: str | None = None
    target: str | None = None
    inputs: dict[str, Source] = field(default_factory=dict)
    depends_on: list[tuple[str, str]] = field(default_factory=list)
    actions: frozenset[DeployAction] = DEFAULT_ACTIONS
    quorum: int | None = None
    retries: int = 0
    timeout_s: float = 600.0
    broken: bool = False


@dataclass(slots=True)
class SoftwareDraft:
    configs: dict[str, SoftwareConfig] = field(default_factory=dict)
    config_paths: dict[str, str] = field(default_factory=dict)
    deployments: list[DeploymentDraft] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)
    generated: dict[str, str] = field(default_factory=dict)


def read_software(
    raw: object, path: str, params: ParameterTable, out: ProblemList
) -> SoftwareDraft:
    draft = SoftwareDraft(secrets=params.secrets(), generated=params.generated())
    if raw is None:
        return draft
    f = mapping(raw, path, out, "'software'")
    if f is None:
        return draft
    configs = _named(f, "configs", MAX_CONFIGS, out)
    for name, body, where in configs:
        config = _config(name, body, where, out)
        if config is not None:
            draft.configs[name] = config
            draft.config_paths[name] = where
    for name, body, where in _named(f, "deployments", MAX_DEPLOYMENTS, out):
        draft.deployments.append(_deployment(name, body, where, params, out))
    f.finish()
    return draft


def _named(f: Fields, key: str, limit: int, out: ProblemList) -> list[tuple[str, object, str]]:
    raw = f.raw(key)
    if raw is None:
        return []
    section = mapping(raw, f.at(key), out, f"'{key}' (a mapping of names to {key})")
    if section is None:
        return []
    entries = section.entries()
    if len(entries) > limit:
        out.add(f.at(key), f"at most {limit} {key}, found {len(entries)}")
        return []
    result = []
    for name, body in entries:
        where = section.at(name)
        if not is_name(name):
            out.add(where, f"{quote(name)} is not a valid name: {NAME_RULE}")
            continue
        result.append((name, body, where))
    return result


def _config(name: str, body: object, path: str, out: ProblemList) -> SoftwareConfig | None:
    f = mapping(body, path, out, "a config")
    if f is None:
        return None
    group = f.choice("group", HookGroup, required="name the tool that runs it, e.g. script")
    text = f.text("config", required="give the config body (a script, a playbook, ...)")
    if text is not None and len(text.encode()) > MAX_CONFIG_BYTES:
        f.problem("config", f"the config body is larger than {MAX_CONFIG_BYTES} bytes")
        text = None
    inputs = [i for i in _io(f, "inputs", out) if i is not None]
    outputs = [o for o in _io(f, "outputs", out) if o is not None]
    options = f.raw("options")
    if options is not None and (not is_mapping(options) or too_deep(options)):
        f.problem("options", f"expected a mapping of options, found {describe(options)}")
        options = None
    input_key = f.text("input_key", empty_ok=False)
    if input_key is not None and text is not None and not _structured(text):
        f.problem(
            "config",
            "with input_key, the config body is a JSON mapping (at most "
            f"{MAX_VALUE_DEPTH} levels deep) in which {{{input_key}: NAME}} is replaced",
        )  # the config is still returned: its deployments need not say it is unknown
    f.finish()
    if group is None or text is None:
        return None
    opts = to_json(options) if options is not None else {}
    return SoftwareConfig(
        name,
        group,
        text,
        tuple(i for i in inputs if isinstance(i, ConfigInput)),
        tuple(o for o in outputs if isinstance(o, ConfigOutput)),
        opts if isinstance(opts, dict) else {},
        input_key,
    )


def _structured(text: str) -> bool:
    """A JSON mapping, shallow enough to substitute into without recursion trouble."""
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(body, dict) and not too_deep(body)


def _io(f: Fields, key: str, out: ProblemList) -> list[ConfigInput | ConfigOutput | None]:
    items = f.items(key, what=key)
    if len(items) > MAX_IO:
        f.problem(key, f"at most {MAX_IO} {key}, found {len(items)}")
        return []
    result: list[ConfigInput | ConfigOutput | None] = []
    seen: set[str] = set()
    for value, where in items:
        if isinstance(value, str):
            value = {"name": value}
        g = mapping(value, where, out, f"one of the {key} (a name, or a mapping with 'name')")
        if g is None:
            result.append(None)
            continue
        name = g.name("name", required="name it")
        kind = g.choice("type", IOType, default=IOType.STRING)
        description = g.text("description") or ""
        if key == "inputs":
            default = to_json(g.raw("default"))
            item: ConfigInput | ConfigOutput | None = (
                ConfigInput(name, kind, default, description)
                if name is not None and kind is not None
                else None
            )
        else:
            error_output = g.flag("error_output", default=False)
            item = (
                ConfigOutput(name, kind, bool(error_output), description)
                if name is not None and kind is not None
                else None
            )
        g.finish()
        if name is not None and name in seen:
            out.add(child(where, "name"), f"'{name}' is declared twice in {key}")
            item = None
        if name is not None:
            seen.add(name)
        result.append(item)
    return result


def _deployment(
    name: str, body: object, path: str, params: ParameterTable, out: ProblemList
) -> DeploymentDraft:
    draft = DeploymentDraft(name, path)
    f = mapping(body, path, out, "a deployment")
    if f is None:
        draft.broken = True
        return draft
    before = len(out)
    draft.config = f.name("config", required="name the config it applies")
    draft.target = f.text(
        "target", required="name what it runs on: a node group, GROUP/PART or an instance"
    )
    raw_inputs = f.raw("inputs")
    if raw_inputs is not None:
        inputs = mapping(raw_inputs, f.at("inputs"), out, "'inputs' (input name: source)")
        if inputs is not None:
            if len(inputs.entries()) > MAX_IO:
                f.problem("inputs", f"at most {MAX_IO} inputs, found {len(inputs.entries())}")
            else:
                for key, value in inputs.entries():
                    source = read_source(value, inputs.at(key), params, out, network=True)
                    if source is not None:
                        draft.inputs[key] = source
    draft.depends_on = f.names("depends_on", what="deployment name") or []
    draft.actions = _actions(f, out)
    draft.quorum = f.integer("quorum", minimum=1, maximum=1_000_000)
    draft.retries = f.integer("retries", minimum=0, maximum=MAX_RETRIES, default=0) or 0
    timeout = f.number("timeout", minimum=0, above=True, default=600.0, unit="seconds")
    if timeout is not None and timeout > MAX_TIMEOUT_S:
        f.problem("timeout", f"must be at most {MAX_TIMEOUT_S:g} seconds")
    draft.timeout_s = timeout if timeout is not None else 600.0
    f.finish()
    draft.broken = len(out) > before
    return draft


def _actions(f: Fields, out: ProblemList) -> frozenset[DeployAction]:
    raw = f.raw("actions")
    if raw is None:
        return DEFAULT_ACTIONS
    if not is_list(raw) or not raw:
        f.problem("actions", "expected a non-empty list of CREATE, UPDATE, DELETE")
        return DEFAULT_ACTIONS
    actions: set[DeployAction] = set()
    for i, value in enumerate(raw):
        text = value.upper() if isinstance(value, str) else None
        if text not in {a.value for a in DeployAction}:
            out.add(
                child(f.at("actions"), i),
                f"expected CREATE, UPDATE or DELETE, found {describe(value)}",
            )
            continue
        actions.add(DeployAction(text))
    return frozenset(actions) or DEFAULT_ACTIONS


def build_software(draft: SoftwareDraft) -> SoftwareSpec:
    """The model of a draft that produced no problems."""
    deployments = tuple(
        Deployment(
            name=d.name,
            config=d.config or "",
            target=MemberRef.parse(d.target or ""),
            inputs={k: s.source for k, s in d.inputs.items()},
            depends_on=tuple(n for n, _ in d.depends_on),
            actions=d.actions,
            quorum=d.quorum,
            retries=d.retries,
            timeout_s=d.timeout_s,
        )
        for d in draft.deployments
    )
    used = {
        s.source.parameter
        for d in draft.deployments
        for s in d.inputs.values()
        if isinstance(s.source, SecretInput)
    }
    secrets = {k: v for k, v in draft.secrets.items() if k in used}
    generated = {k: v for k, v in draft.generated.items() if k in secrets}
    return SoftwareSpec(tuple(draft.configs.values()), deployments, secrets, generated)

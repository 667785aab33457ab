"""Heat environments: parameter values, defaults and a resource registry, merged in order.

Several environments (`-e a.yaml -e b.yaml`) merge as Heat merges them: a later file's
`parameters` and `parameter_defaults` override earlier ones key by key, and its registry entries
override earlier entries for the same type (per-resource overrides under `resources:` merge per
resource). `event_sinks` and other sections Shoal has no use for are ignored with a notice.
A registry entry maps a type to another type, or to a nested template file (a name ending in
.yaml/.yml/.template, or with a '/'), or to OS::Heat::None.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.collect import child
from shoal.documents.hot.report import Report
from shoal.documents.tree import describe

_IGNORED = ("event_sinks", "encrypted_param_names", "parameter_merge_strategies")
MAX_CHAIN = 16


@dataclass(slots=True)
class Environment:
    parameters: dict[str, object] = field(default_factory=dict)
    parameter_defaults: dict[str, object] = field(default_factory=dict)
    registry: dict[str, str] = field(default_factory=dict)
    per_resource: dict[str, dict[str, str]] = field(default_factory=dict)
    given_at: dict[str, str] = field(default_factory=dict)
    """Parameter name -> the pointer of the value in effect (parameters, then defaults)."""
    default_at: dict[str, str] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    """For a registry entry naming a file: the file that named it (paths are relative to it)."""


def is_file_ref(target: str) -> bool:
    return "/" in target or target.endswith((".yaml", ".yml", ".template", ".json"))


def read_environment(
    data: object, path: str, source: str, env: Environment, report: Report
) -> None:
    """Merge one parsed (plain) environment into `env`; `source` names its file for paths."""
    if data is None:
        return
    if not isinstance(data, dict):
        report.problem(path, f"an environment must be a mapping, found {describe(data)}")
        return
    for key, value in data.items():
        where = child(path, str(key))
        if key in ("parameters", "parameter_defaults"):
            if value is None:
                continue
            if not isinstance(value, dict):
                report.problem(where, f"'{key}' must be a mapping, found {describe(value)}")
                continue
            target = env.parameters if key == "parameters" else env.parameter_defaults
            at = env.given_at if key == "parameters" else env.default_at
            for k, v in value.items():
                target[str(k)] = v
                at[str(k)] = child(where, str(k))
        elif key == "resource_registry":
            _registry(value, where, source, env, report)
        elif key in _IGNORED:
            report.notice(where, f"'{key}' is ignored: Shoal has no use for it")
        else:
            report.problem(
                where,
                f"unknown environment section '{key}'; an environment has parameters, "
                "parameter_defaults and resource_registry",
            )


def _registry(value: object, path: str, source: str, env: Environment, report: Report) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        report.problem(path, f"'resource_registry' must be a mapping, found {describe(value)}")
        return
    for key, target in value.items():
        where = child(path, str(key))
        if key == "resources":
            if not isinstance(target, dict):
                report.problem(where, "'resources' must map resource names to type mappings")
                continue
            for res, mapping in target.items():
                if not isinstance(mapping, dict):
                    report.problem(child(where, str(res)), "expected a mapping of type -> target")
                    continue
                entries = env.per_resource.setdefault(str(res), {})
                for t, dest in mapping.items():
                    if t in ("hooks", "restricted_actions"):
                        report.notice(child(where, str(res), str(t)), f"'{t}' is ignored")
                    elif isinstance(dest, str):
                        entries[str(t)] = dest
                        env.origin[dest] = source
                    elif isinstance(dest, dict):
                        _nested_entry(dest, child(where, str(res), str(t)), report)
                    else:
                        report.problem(
                            child(where, str(res), str(t)),
                            "a registry target is text, or a nested resource's entries",
                        )
            continue
        if key == "base_url":
            report.notice(where, "'base_url' is ignored; give nested templates in 'files'")
            continue
        if not isinstance(target, str):
            report.problem(where, f"a registry target must be text, found {describe(target)}")
            continue
        env.registry[str(key)] = target
        env.origin[target] = source


def _nested_entry(entry: dict[object, object], path: str, report: Report) -> None:
    """A nested stack's resource's own entries (Heat: `resources: {nested: {res: {...}}}`)."""
    for key, value in entry.items():
        where = child(path, str(key))
        if key in ("hooks", "restricted_actions"):
            report.notice(where, f"'{key}' is ignored")
        elif isinstance(value, dict):
            _nested_entry(value, where, report)
        else:
            report.cannot(
                "a nested stack's per-resource registry",
                where,
                "Shoal does not read a per-resource registry entry for a nested stack's "
                "resource yet",
            )


def lookup(
    env: Environment,
    type_name: str,
    resource: str | None,
    skip: frozenset[str] = frozenset(),
) -> tuple[str, list[str]]:
    """What `type_name` (of `resource`) finally maps to, and the chain of mappings followed.

    `skip`: types whose mapping is not applied (inside the template a type was mapped to, as
    Heat's child environment drops the entry that led there: a wrapper of OS::Nova::Server
    uses the real OS::Nova::Server).
    """
    chain: list[str] = []
    current = type_name
    for _ in range(MAX_CHAIN):
        found: str | None = None
        if current in skip:
            return current, chain
        if resource is not None:
            found = env.per_resource.get(resource, {}).get(current)
        if found is None:
            found = env.registry.get(current)
        if found is None:
            for pattern, dest in env.registry.items():
                if pattern.endswith("*") and current.startswith(pattern[:-1]):
                    found = (
                        (dest[:-1] + current[len(pattern) - 1 :]) if dest.endswith("*") else dest
                    )
                    break
        if found is None or found == current or is_file_ref(current):
            return current, chain
        chain.append(found)
        current = found
    return current, chain

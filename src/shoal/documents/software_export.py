"""Software back to the native document (what `documents/export.py` stores): loading it again gives
an equal `SoftwareSpec`.

Secrets are written as hidden parameters with their values as defaults, since the stored
document is all the engine has when it reloads a cluster; views must not show them
(`hidden_parameters` names them for redaction).
"""

from __future__ import annotations

from typing import Any

from shoal.documents.software import DEFAULT_ACTIONS
from shoal.documents.software_sources import NET_OF, is_source_shaped
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    Deployment,
    InputSource,
    IOType,
    LiteralInput,
    MemberFactsInput,
    NetworkFact,
    NodeFact,
    NodeFactInput,
    OutputInput,
    OutputScope,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)


def software_document(sw: SoftwareSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if sw.configs:
        out["configs"] = {c.name: _config(c) for c in sw.configs}
    if sw.deployments:
        out["deployments"] = {d.name: _deployment(d) for d in sw.deployments}
    return out


def secret_parameters(sw: SoftwareSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in sorted(sw.secrets.items()):
        out[name] = {"type": "string", "hidden": True, "default": value}
        if name in sw.generated:
            out[name]["description"] = sw.generated[name]
    return out


def _io(item: ConfigInput | ConfigOutput) -> dict[str, Any] | str:
    out: dict[str, Any] = {"name": item.name}
    if item.type is not IOType.STRING:
        out["type"] = str(item.type)
    if isinstance(item, ConfigInput) and item.default is not None:
        out["default"] = item.default
    if isinstance(item, ConfigOutput) and item.error_output:
        out["error_output"] = True
    if item.description:
        out["description"] = item.description
    return item.name if len(out) == 1 else out


def _config(c: SoftwareConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"group": str(c.group), "config": c.config}
    if c.inputs:
        out["inputs"] = [_io(i) for i in c.inputs]
    if c.outputs:
        out["outputs"] = [_io(o) for o in c.outputs]
    if c.options:
        out["options"] = dict(c.options)
    if c.input_key is not None:
        out["input_key"] = c.input_key
    return out


def source_document(s: InputSource) -> Any:
    """An input source as the native document writes it (workloads' env uses the same)."""
    return _source(s)


def _source(s: InputSource) -> Any:
    match s:
        case LiteralInput(value):
            return {"value": value} if is_source_shaped(value) else value
        case SecretInput(parameter):
            return {"secret": parameter}
        case NodeFactInput(fact):
            return {"node": str(fact)}
        case MemberFactsInput(member, fact):
            out: dict[str, Any] = {"members": str(member)}
            if fact is not NodeFact.ADDRESS:
                out["fact"] = str(fact)
            return out
        case OutputInput(deployment, output, scope):
            result: dict[str, Any] = {"output": f"{deployment}.{output}"}
            if scope is not OutputScope.NODE:
                result["from"] = str(scope)
            return result
        case NetworkFact(attr, name):
            of = next(k for k, v in NET_OF.items() if v is attr)
            return {"network_address": name, "of": of}


def _deployment(d: Deployment) -> dict[str, Any]:
    out: dict[str, Any] = {"config": d.config, "target": str(d.target)}
    if d.inputs:
        out["inputs"] = {k: _source(v) for k, v in d.inputs.items()}
    if d.depends_on:
        out["depends_on"] = list(d.depends_on)
    if d.actions != DEFAULT_ACTIONS:
        out["actions"] = sorted(str(a) for a in d.actions)
    if d.quorum is not None:
        out["quorum"] = d.quorum
    if d.retries:
        out["retries"] = d.retries
    if d.timeout_s != 600.0:
        out["timeout"] = int(d.timeout_s) if d.timeout_s.is_integer() else d.timeout_s
    return out


REDACTED = "******"


def redacted(document: Any) -> Any:
    """A stored document as views show it: hidden parameters' values replaced by `REDACTED`.

    The stored document keeps secrets (the engine reloads clusters from it); nothing that
    answers a request or writes an event should show them.
    """
    if not isinstance(document, dict) or not isinstance(document.get("parameters"), dict):
        return document
    params = {
        name: (
            {**p, "default": REDACTED}
            if isinstance(p, dict) and p.get("hidden") is True and "default" in p
            else p
        )
        for name, p in document["parameters"].items()
    }
    return {**document, "parameters": params}

"""Heat software configs and deployments: read and validated as Heat validates them.

These resources are checked as Heat checks them (their properties, that a deployment's
`config` names a config and its `server` a server) and kept as `SoftwareShape`s with their
evaluated properties; `deployments.py` maps them onto Shoal's software model once the cluster
draft (the elements each server became) is known. Which input is a hidden parameter is only
visible here, before evaluation replaced `get_param` by its value.
"""

from __future__ import annotations

from shoal.documents.collect import child
from shoal.documents.hot.context import Resource, StackView, check_props
from shoal.documents.hot.shapes import SoftwareShape
from shoal.documents.hot.values import Ref, is_symbolic
from shoal.documents.tree import describe

CONFIG_TYPES = frozenset(
    {
        "OS::Heat::SoftwareConfig",
        "OS::Heat::StructuredConfig",
        "OS::Heat::CloudConfig",
        "OS::Heat::MultipartMime",
    }
)
SERVER_TYPES = frozenset({"OS::Nova::Server"})
_CONFIG_PROPS = frozenset({"group", "config", "inputs", "outputs", "options"})
_DEPLOY_PROPS = frozenset(
    {"config", "server", "input_values", "actions", "signal_transport", "name"}
)
_GROUP_PROPS = (_DEPLOY_PROPS - {"server"}) | {"servers"}
_STRUCTURED = frozenset({"input_key", "input_values_validate"})
_CLOUD_PROPS = frozenset({"cloud_config"})
_MIME_PROPS = frozenset({"parts", "group"})
_ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL")
_IO_KEYS = frozenset(
    {"name", "description", "type", "default", "replace_on_change", "error_output"}
)
_IO_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")
_VALIDATE = ("LAX", "STRICT")


def config(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    check_props(res, props, report, _CONFIG_PROPS)
    where = child(res.path, "properties")
    body = props.get("config")
    if res.type == "OS::Heat::StructuredConfig":
        if body is not None and not isinstance(body, dict) and not is_symbolic(body):
            report.problem(
                child(where, "config"), f"a structured config is a mapping, found {describe(body)}"
            )
    elif body is not None and not isinstance(body, str) and not is_symbolic(body):
        report.problem(child(where, "config"), f"a software config is text, found {describe(body)}")
    for key in ("inputs", "outputs"):
        _io(stack, props.get(key), child(where, key))
    stack.shape.software.append(SoftwareShape(res.name, res.path, res.type, props=props))


def boot_config(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    """OS::Heat::CloudConfig and MultipartMime: user data a server boots with."""
    known = _CLOUD_PROPS if res.type == "OS::Heat::CloudConfig" else _MIME_PROPS
    check_props(res, props, stack.ctx.report, known)
    stack.shape.software.append(SoftwareShape(res.name, res.path, res.type))


def _io(stack: StackView, value: object, path: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        stack.ctx.report.problem(path, f"expected a list of {{name: ...}}, found {describe(value)}")
        return
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            stack.ctx.report.problem(child(path, i), "each entry is a mapping with a 'name'")
            continue
        for key in item:
            if key not in _IO_KEYS:
                stack.ctx.report.problem(child(path, i, str(key)), f"unknown key '{key}'")
        if item.get("type", "String") not in _IO_TYPES:
            stack.ctx.report.problem(
                child(path, i, "type"), f"type is one of {', '.join(_IO_TYPES)}"
            )


def deployment(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    report = stack.ctx.report
    grouped = res.type.endswith(("Group", "Deployments"))
    known = _GROUP_PROPS if grouped else _DEPLOY_PROPS
    if "Structured" in res.type:
        known = known | _STRUCTURED
    check_props(res, props, report, known, ("servers",) if grouped else ("config", "server"))
    where = child(res.path, "properties")
    _reference(stack, props.get("config"), child(where, "config"), CONFIG_TYPES, "software config")
    servers: list[str] = []
    if grouped:
        value = props.get("servers")
        if isinstance(value, dict):
            for k, v in value.items():
                servers += _reference(
                    stack, v, child(where, "servers", str(k)), SERVER_TYPES, "server"
                )
        elif value is not None and not is_symbolic(value):
            report.problem(
                child(where, "servers"), f"servers maps names to servers, found {describe(value)}"
            )
    else:
        servers = _reference(
            stack, props.get("server"), child(where, "server"), SERVER_TYPES, "server"
        )
    actions = props.get("actions", ["CREATE", "UPDATE"])
    if not isinstance(actions, list) or any(a not in _ACTIONS for a in actions):
        report.problem(child(where, "actions"), f"actions is a list of {', '.join(_ACTIONS)}")
    transport = props.get("signal_transport")
    if transport is not None and transport not in _TRANSPORTS:
        report.problem(
            child(where, "signal_transport"), f"signal_transport is one of {', '.join(_TRANSPORTS)}"
        )
    values = props.get("input_values")
    if values is not None and not isinstance(values, dict) and not is_symbolic(values):
        report.problem(child(where, "input_values"), "input_values is a mapping")
    key = props.get("input_key")
    if key is not None and (not isinstance(key, str) or not key):
        report.problem(child(where, "input_key"), "input_key is a non-empty text")
    check = props.get("input_values_validate")
    if check is not None and check not in _VALIDATE:
        report.problem(
            child(where, "input_values_validate"),
            f"input_values_validate is one of {', '.join(_VALIDATE)}",
        )
    stack.shape.software.append(
        SoftwareShape(
            res.name, res.path, res.type, tuple(servers), props, _hidden_inputs(stack, res)
        )
    )


def _hidden_inputs(stack: StackView, res: Resource) -> dict[str, str]:
    """Input name -> hidden parameter, for inputs written as `get_param` of one."""
    raw = res.raw.get("properties")
    values = raw.get("input_values") if isinstance(raw, dict) else None
    found: dict[str, str] = {}
    if not isinstance(values, dict):
        return found
    for key, value in values.items():
        if not isinstance(value, dict) or set(value) != {"get_param"}:
            continue
        name = value["get_param"]
        if isinstance(name, list) and len(name) == 1:
            name = name[0]
        param = stack.params.get(name) if isinstance(name, str) else None
        if param is not None and param.hidden:
            found[str(key)] = param.name
    return found


def _reference(
    stack: StackView, value: object, path: str, types: frozenset[str], what: str
) -> list[str]:
    if isinstance(value, Ref) and value.scope == stack.name:
        kind = stack.type_of(value.name)
        if kind == "OS::Heat::SoftwareComponent" and what == "software config":
            # Heat's component is a config of several actions' scripts: valid, not read yet.
            stack.ctx.report.cannot(
                "software component",
                path,
                f"Shoal does not read an OS::Heat::SoftwareComponent ('{value.name}') as a "
                "deployment's config yet",
            )
            return []
        if kind is not None and kind not in types and kind != "OS::Heat::None":
            stack.ctx.report.problem(path, f"'{value.name}' is a {kind}, not a {what}")
            return []
        return [value.name]
    if value is not None and not is_symbolic(value) and not isinstance(value, str):
        stack.ctx.report.problem(
            path, f"expected a {what} (get_resource or an id), found {describe(value)}"
        )
    return []

"""Heat's wire protocol with its in-guest agents: the metadata a server polls, the signal it sends.

Existing OpenStack images run Heat's agent chain (os-collect-config → os-refresh-config →
heat-config → a hook → heat-config-notify). To drive those agents unchanged, Shoal serves a
server's deployments in exactly the shape Heat puts in the server's metadata, and reads back the
JSON body heat-config-notify POSTs to a deployment's signal URL. Both directions live here, pure,
so the API, the engine and the local provider's agent runner share one definition of the wire.
It is no document reader: it sits with the model, below every layer that speaks it (the
document readers, the providers, the engine, the API), so those stay independent of each other.

The shape follows Heat (`SoftwareDeployment._build_derived_config_params` and
`format_software_config`): the metadata is `{"deployments": [config, ...]}`, and each config is
`{id, name, group, creation_time, config, inputs, outputs, options}` where `inputs` lists the
declared inputs with their values, then undeclared input values, then the derived `deploy_*`
inputs that tell heat-config-notify where to signal. heat-config runs a config only once per
`id` (it keeps `deployed/<id>.json`), so the id must change whenever a deployment must run
again: by default it is derived from the node, deployment, action and digest; the engine passes
its own (one per run, so a retry of a failed run with the same digest runs again).

Two small liberties, both within what the real agents accept: the signal transport is Heat's
`CFN_SIGNAL` (a POST to a URL that carries its own secret; no Keystone credentials in the
metadata), and a null value is served as "" and a number or boolean given to a `script` config
as text, because the script hook puts every value into the environment of the script and
crashes on anything but text; a list for a `CommaDelimitedList` input of a script is served
as "a,b,c", which is what the type means (the hook would otherwise hand the script JSON).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from shoal.model.problems import InvalidDocument, Problem
from shoal.model.software import (
    ConfigInput,
    DeploymentSignal,
    HookGroup,
    IOType,
    Json,
    ResolvedDeployment,
    SoftwareConfig,
)

DEPLOYMENTS_KEY = "deployments"
"""The metadata key os-collect-config's collectors explode into one entry per deployment."""

COLLECTOR_KEY = "os-collect-config"
"""The metadata key heat-config's os-apply-config template renders os-collect-config.conf from."""

SIGNAL_TRANSPORT = "CFN_SIGNAL"
SIGNAL_VERB = "POST"

STDOUT = "deploy_stdout"
STDERR = "deploy_stderr"
STATUS_CODE = "deploy_status_code"
_SIGNAL_FIELDS = (STDOUT, STDERR, STATUS_CODE)

MAX_SIGNAL_BYTES = 1_048_576
"""Heat's max_json_body_size; heat-config-notify trims stdout/stderr to stay under 950,000."""

MAX_SIGNAL_OUTPUTS = 256
"""More outputs than any config declares; a bound on work before looking at them."""

MAX_SIGNAL_DEPTH = 32
"""How deeply a signal's outputs may nest (issue 29: a body nested 500k deep was a 500)."""

MAX_STATUS_CODE = 2**31 - 1
"""The largest `deploy_status_code` magnitude kept (a 32-bit column; 10**29 was a 500)."""

MAX_OUTPUT_INT = 2**63 - 1
"""Integers in outputs beyond a 64-bit range are refused: every store and client reads them."""

_NAMESPACE = uuid.UUID("5b0e1c1e-6f43-4a57-9d0b-3c1a7e0d2f11")


@dataclass(frozen=True, slots=True)
class CollectorSettings:
    """What os-collect-config needs to poll Shoal, as Heat serves it under `os-collect-config`.

    With heat-config's os-apply-config templates on the image, the agent rewrites its own
    os-collect-config.conf from this and re-executes itself, so a server booted with only the
    metadata URL keeps following what Shoal serves.
    """

    metadata_url: str
    polling_interval: float = 30.0
    collectors: tuple[str, ...] = ("ec2", "request", "local")
    """Heat's for a Nova server polling a URL (POLL_TEMP_URL): its defaults, then `request`."""

    def as_json(self) -> dict[str, Json]:
        return {
            "collectors": list(self.collectors),
            "polling_interval": self.polling_interval,
            "request": {"metadata_url": self.metadata_url},
        }


def default_config_id(resolved: ResolvedDeployment) -> str:
    """A stable id for one run: the same deployment, node, action and digest give the same id."""
    key = "\0".join((resolved.node, resolved.deployment, resolved.action.value, resolved.digest))
    return str(uuid.uuid5(_NAMESPACE, key))


def server_metadata(
    resolved: Sequence[ResolvedDeployment],
    signal_url: Callable[[ResolvedDeployment], str],
    *,
    server_id: str,
    stack_id: str = "",
    config_id: Callable[[ResolvedDeployment], str] = default_config_id,
    creation_time: str = "",
    collector: CollectorSettings | None = None,
) -> dict[str, Json]:
    """The metadata one server's agents read: every deployment applied to it, in the order given.

    Heat lists every deployment of a server, finished ones included (heat-config skips the ids
    it has already run), so the caller passes the current run of each. Secret inputs appear
    with their values: this is the one place they are served; never log the result.

    Pass `collector` (the same settings the server was booted with) as Heat always does: an
    image's agents render their own configuration from what they poll, and without the key
    they would fall back to their defaults and back again on every poll.
    """
    deployments: list[Json] = [
        _config_entry(
            r,
            signal_url(r),
            server_id=server_id,
            stack_id=stack_id,
            config_id=config_id(r),
            creation_time=creation_time,
        )
        for r in resolved
    ]
    metadata: dict[str, Json] = {DEPLOYMENTS_KEY: deployments}
    if collector is not None:
        metadata[COLLECTOR_KEY] = collector.as_json()
    return metadata


def _config_entry(
    r: ResolvedDeployment,
    signal_url: str,
    *,
    server_id: str,
    stack_id: str,
    config_id: str,
    creation_time: str,
) -> dict[str, Json]:
    config = r.config
    inputs = _inputs(r, signal_url, server_id=server_id, stack_id=stack_id)
    entry: dict[str, Json] = {
        "id": config_id,
        "name": r.deployment,
        "group": config.group.value,
        "creation_time": creation_time,
        "config": config.config if config.input_key is None else _substituted(r, inputs),
        "inputs": inputs,
        "outputs": [_output(o.name, o.type, o.description, o.error_output) for o in config.outputs],
        "options": dict(config.options),
    }
    return entry


def _substituted(r: ResolvedDeployment, served: list[Json]) -> str:
    """Heat's `StructuredDeployment.parse`: in the config's mapping, every `{input_key: NAME}`
    (a mapping of that one key to a text) becomes the value of input NAME, from every input
    the node is given (declared, undeclared, then `deploy_*`), null when there is none.
    Values are the resolved ones, not the text a script hook is served."""
    key = r.config.input_key
    values: dict[str, Json] = {}
    for item in served:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            values[str(item["name"])] = item.get("value")
    for declared in r.config.inputs:
        values[declared.name] = r.inputs.get(declared.name, declared.default)
    values.update(r.inputs)

    def parse(node: Json) -> Json:
        if isinstance(node, dict):
            if len(node) == 1 and isinstance(node.get(key or ""), str):
                return values.get(str(node[key or ""]))
            return {k: parse(v) for k, v in node.items()}
        if isinstance(node, list):
            return [parse(v) for v in node]
        return node

    return json.dumps(parse(json.loads(r.config.config)), sort_keys=True)


def _inputs(r: ResolvedDeployment, signal_url: str, *, server_id: str, stack_id: str) -> list[Json]:
    config = r.config
    as_text = config.group is HookGroup.SCRIPT
    declared = {i.name for i in config.inputs}
    out: list[Json] = []
    for declared_input in config.inputs:
        value = r.inputs.get(declared_input.name, declared_input.default)
        if as_text and declared_input.type is IOType.LIST and isinstance(value, list):
            # A script reads a CommaDelimitedList as Heat writes one: "a,b,c", not JSON.
            value = ",".join(str(_wire_value(v, as_text)) for v in value)
        out.append(_declared_input(declared_input, _wire_value(value, as_text)))
    for name, value in r.inputs.items():
        if name not in declared:
            out.append(
                {"name": name, "type": IOType.STRING.value, "value": _wire_value(value, as_text)}
            )
    derived: tuple[tuple[str, str, str], ...] = (
        ("deploy_server_id", server_id, "ID of the server being deployed to"),
        ("deploy_action", r.action.value, "Name of the current action being deployed"),
        ("deploy_stack_id", stack_id, "ID of the stack this deployment belongs to"),
        ("deploy_resource_name", r.deployment, "Name of this deployment resource in the stack"),
        (
            "deploy_signal_transport",
            SIGNAL_TRANSPORT,
            "How the server should signal to heat with the deployment output values.",
        ),
        ("deploy_signal_id", signal_url, "ID of signal to use for signaling output values"),
        ("deploy_signal_verb", SIGNAL_VERB, "HTTP verb to use for signaling outputvalues"),
    )
    for name, value, description in derived:
        out.append(
            {"name": name, "type": IOType.STRING.value, "description": description, "value": value}
        )
    return out


def _declared_input(declared: ConfigInput, value: Json) -> dict[str, Json]:
    entry: dict[str, Json] = {"name": declared.name, "type": declared.type.value}
    if declared.description:
        entry["description"] = declared.description
    if declared.default is not None:
        entry["default"] = declared.default
    entry["value"] = value
    return entry


def _output(name: str, type_: IOType, description: str, error_output: bool) -> dict[str, Json]:
    entry: dict[str, Json] = {"name": name, "type": type_.value, "error_output": error_output}
    if description:
        entry["description"] = description
    return entry


def _wire_value(value: Json, as_text: bool) -> Json:
    if value is None:
        return ""
    if as_text and isinstance(value, bool):
        return "true" if value else "false"
    if as_text and isinstance(value, int | float):
        return str(value)
    return value


def redacted(metadata_inputs: Sequence[Json], secret_inputs: frozenset[str]) -> list[Json]:
    """A served `inputs` list with secret values replaced, for showing what a node was given."""
    out: list[Json] = []
    for item in metadata_inputs:
        if isinstance(item, dict) and item.get("name") in secret_inputs:
            out.append({**item, "value": "******"})
        else:
            out.append(item)
    return out


def parse_signal(body: bytes | str | Mapping[str, object]) -> DeploymentSignal:
    """Read what heat-config-notify POSTed: `deploy_stdout`, `deploy_stderr`,
    `deploy_status_code` and every output at the top level of one JSON object.

    A missing status code means success, as in Heat (a hook may print only its outputs).
    Raises `InvalidDocument` naming every bad field.
    """
    data = _decode(body)
    problems: list[Problem] = []
    stdout = _text(data, STDOUT, problems)
    stderr = _text(data, STDERR, problems)
    status_code = _status_code(data.get(STATUS_CODE), problems)
    outputs = {k: v for k, v in data.items() if k not in _SIGNAL_FIELDS}
    if len(outputs) > MAX_SIGNAL_OUTPUTS:
        problems.append(
            Problem(
                "", f"a signal carries at most {MAX_SIGNAL_OUTPUTS} outputs, found {len(outputs)}"
            )
        )
    json_outputs = {k: v for k, v in outputs.items() if _is_json(v)}
    for name, value in json_outputs.items():
        problem = _bounded(value)
        if problem is not None:
            problems.append(Problem(f"/{_escape(_storable_text(name))}", problem))
    if problems:
        raise InvalidDocument(problems)
    return DeploymentSignal(
        status_code=status_code,
        stdout=_storable_text(stdout),
        stderr=_storable_text(stderr),
        outputs={_storable_text(k): _storable(v) for k, v in json_outputs.items()},
    )


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable_text(text: str) -> str:
    """`text` with NUL and lone surrogates as U+FFFD. A script may print either (a NUL byte, a
    half of a pair cut at a buffer's end); refusing the signal would lose the run's result
    until its timeout, so what no store can hold is replaced instead (the API refuses them in
    every other body, api/characters.py)."""
    return _UNSTORABLE.sub("\ufffd", text) if _UNSTORABLE.search(text) else text


def _storable(value: Json) -> Json:
    """`value` with every string and key made storable (outputs are at most
    `MAX_SIGNAL_DEPTH` deep by now, so the recursion is bounded)."""
    if isinstance(value, str):
        return _storable_text(value)
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {_storable_text(k): _storable(v) for k, v in value.items()}
    return value


def failure_reason(signal: DeploymentSignal, config: SoftwareConfig) -> str | None:
    """Why Heat would mark this run FAILED (a non-zero status code, or a declared
    `error_output` that came back with a value), or None when it succeeded."""
    if signal.status_code != 0:
        return f"Deployment exited with non-zero status code: {signal.status_code}"
    for output in config.outputs:
        if output.error_output and output.name in signal.outputs:
            return f"{output.name}: {signal.outputs[output.name]}"
    return None


def declared_outputs(signal: DeploymentSignal, config: SoftwareConfig) -> dict[str, Json]:
    """The outputs a config declares, as Heat keeps them: others in the signal are ignored.
    Heat also keeps `deploy_stdout`, `deploy_stderr` and `deploy_status_code` as every
    deployment's outputs (a template's `get_attr: [D, deploy_stdout]`); see `with_heat_outputs`."""
    return {o.name: signal.outputs[o.name] for o in config.outputs if o.name in signal.outputs}


def with_heat_outputs(
    outputs: Mapping[str, Json], status_code: int | None, stdout: str, stderr: str
) -> dict[str, Json]:
    """`outputs` with the three every Heat deployment has, so another deployment's input can
    take them; the caller passes stdout and stderr as it stores them (secrets scrubbed, the
    tail kept), so an output is never more than the stored log."""
    return {**outputs, STDOUT: stdout, STDERR: stderr, STATUS_CODE: status_code}


def _decode(body: bytes | str | Mapping[str, object]) -> Mapping[str, object]:
    if isinstance(body, Mapping):
        return body
    size = len(body.encode() if isinstance(body, str) else body)
    if size > MAX_SIGNAL_BYTES:
        raise InvalidDocument(
            [Problem("", f"a signal is at most {MAX_SIGNAL_BYTES} bytes, found {size}")]
        )
    if not body.strip():
        # heat-config-notify sends {} when the hook printed nothing it could parse.
        return {}
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidDocument([Problem("", f"a signal must be JSON: {exc}")]) from None
    except RecursionError:
        raise InvalidDocument(
            [Problem("", f"a signal nests at most {MAX_SIGNAL_DEPTH} levels deep")]
        ) from None
    if not isinstance(data, dict):
        raise InvalidDocument(
            [Problem("", f"a signal must be a JSON object, found {type(data).__name__}")]
        )
    return data


def _text(data: Mapping[str, object], key: str, problems: list[Problem]) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.append(Problem(f"/{key}", f"{key} must be text, found {type(value).__name__}"))
        return ""
    return value


def _status_code(value: object, problems: list[Problem]) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        problems.append(Problem(f"/{STATUS_CODE}", "deploy_status_code must be an integer"))
        return 0
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = int(value.strip())
    if number is not None and abs(number) <= MAX_STATUS_CODE:
        return number
    if number is not None:
        problems.append(
            Problem(
                f"/{STATUS_CODE}",
                f"deploy_status_code must be between -{MAX_STATUS_CODE} and {MAX_STATUS_CODE}",
            )
        )
        return 0
    problems.append(
        Problem(f"/{STATUS_CODE}", f"deploy_status_code must be an integer, found {value!r:.40}")
    )
    return 0


def _bounded(value: Json) -> str | None:
    """Why an output cannot be kept (too deep, a number no store reads), or None. Walked
    without recursion, so its own depth is no risk."""
    stack: list[tuple[Json, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_SIGNAL_DEPTH:
            return f"an output nests at most {MAX_SIGNAL_DEPTH} levels deep"
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, int):
            if abs(item) > MAX_OUTPUT_INT:
                return "an integer in an output must fit in 64 bits"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "a number in an output must be finite"
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
    return None


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _is_json(value: object) -> TypeGuard[Json]:
    # A decoded body holds nothing else; a mapping handed in by a caller might.
    return value is None or isinstance(value, bool | int | float | str | list | dict)

"""Heat's stack-create and -update bodies, checked and turned into the HOT body Shoal reads.

Heat's body (`stack_name`, `template`, `environment`, `files`, `parameters`, `disable_rollback`,
`timeout_mins`, `tags`, ...) is kept as the client sent its template parts (`StackBody.hot`):
Shoal's HOT reader takes exactly `template`, `environment`, `files`, `parameters`,
`stack_name`. What Shoal will not do is refused here, naming the field: `template_url` and
`environment_files` name things Shoal does not fetch (heatclient sends files' contents in
`files` and merges `-e` files into `environment` itself).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from shoal.documents.hot.functions import plain
from shoal.documents.syntax import parse
from shoal.model.problems import InvalidDocument
from shoal.service.heat.errors import HeatBadRequest

MAX_TIMEOUT_MINS = 10_000
MAX_TAGS = 64
MAX_ENVIRONMENTS = 64
MAX_TAG = 80
_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")
HOT_KEYS = ("template", "environments", "files", "parameters")


@dataclass(frozen=True, slots=True)
class StackBody:
    name: str
    hot: dict[str, Any]
    """template, environment, files, parameters: what Shoal's HOT reader takes."""
    disable_rollback: bool
    timeout_mins: int | None
    tags: list[str]

    def reader_body(self) -> dict[str, Any]:
        return {"stack_name": self.name, **self.hot}


def check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise HeatBadRequest(
            f"Invalid stack name {json.dumps(name)} must contain only alphanumeric or "
            '"_-." characters, must start with alpha and must be 255 characters or less.'
        )
    return name


def _tree(value: object, what: str) -> Any:
    """A template or environment given as text (JSON or YAML) or as a mapping."""
    if isinstance(value, str):
        try:
            value = plain(parse(value.strip(), f"{what}.yaml"))
        except InvalidDocument as bad:
            raise HeatBadRequest(
                f"Failed to parse the {what}: " + "; ".join(p.message for p in bad.problems)
            ) from None
        # as heatclient's loader: a date (`heat_template_version: 2016-10-14`) is its text
        value = json.loads(json.dumps(value, default=str))
    if value is not None and not isinstance(value, dict):
        raise HeatBadRequest(f"The {what} is not a mapping (found {type(value).__name__})")
    return value


def hot_parts(data: dict[str, Any], *, template_required: bool = True) -> dict[str, Any]:
    """The template parts of a body: template, environment, files, parameters."""
    for key in ("template_url", "files_container"):
        if data.get(key):
            raise HeatBadRequest(
                f"'{key}' is not supported: Shoal fetches nothing on a request's behalf; send "
                "the contents ('template', 'environment', 'files'), as heatclient does"
            )
    out: dict[str, Any] = {}
    template = _tree(data.get("template"), "template")
    if template is None and template_required:
        raise HeatBadRequest("No template specified")
    if template is not None:
        out["template"] = template
    files = data.get("files")
    if files is not None:
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise HeatBadRequest("'files' maps file names to their contents (text)")
        out["files"] = files
    envs = _environment_files(data.get("environment_files"), files or {})
    env = _tree(data.get("environment"), "environment")
    if env is not None:
        envs.append(env)
    if envs:
        out["environments"] = envs
    params = data.get("parameters")
    if params is not None:
        if not isinstance(params, dict):
            raise HeatBadRequest("'parameters' is a mapping of parameter names to values")
        out["parameters"] = params
    return out


def _environment_files(names: object, files: dict[str, str]) -> list[Any]:
    """heatclient's `environment_files`: the `-e` files in order, their contents in `files`
    (merged first, then `environment`, as Heat merges them)."""
    if names is None:
        return []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise HeatBadRequest("'environment_files' is a list of keys of 'files'")
    if len(names) > MAX_ENVIRONMENTS:
        raise HeatBadRequest(f"at most {MAX_ENVIRONMENTS} environment files")
    missing = [n for n in names if n not in files]
    if missing:
        raise HeatBadRequest(f"environment files not in 'files': {', '.join(missing)}")
    return [_tree(files[n], "environment") for n in names]


def _flag(data: dict[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise HeatBadRequest(
            f'Unrecognized value "{value}" for "{key}", acceptable values are: true, false.'
        )
    return value


def _timeout(data: dict[str, Any]) -> int | None:
    value = data.get("timeout_mins")
    if value is None:
        return None
    try:
        minutes = int(value)
    except (TypeError, ValueError):
        raise HeatBadRequest(f"Invalid timeout value {value}") from None
    if not 0 < minutes <= MAX_TIMEOUT_MINS:
        raise HeatBadRequest(f"Invalid timeout value {value}: 1 to {MAX_TIMEOUT_MINS} minutes")
    return minutes


def tags_of(value: object) -> list[str]:
    if value is None or value == "":
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(t, str) for t in items):
        raise HeatBadRequest("'tags' is a comma-separated text or a list of texts")
    tags = [t.strip() for t in items if t.strip()]
    if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG for t in tags):
        raise HeatBadRequest(f"at most {MAX_TAGS} tags of {MAX_TAG} characters each")
    return tags


def create_body(data: object) -> StackBody:
    if not isinstance(data, dict):
        raise HeatBadRequest("The request body must be a JSON object")
    name = check_name(data.get("stack_name"))
    return StackBody(
        name,
        hot_parts(data),
        _flag(data, "disable_rollback", True),
        _timeout(data),
        tags_of(data.get("tags")),
    )


def update_body(data: object, before: StackBody, *, patch: bool) -> StackBody:
    """A PUT's body (the whole stack again) or a PATCH's (`existing`: what is not given is
    kept; parameters, environment and files merged into the stored ones, as Heat does)."""
    if not isinstance(data, dict):
        raise HeatBadRequest("The request body must be a JSON object")
    given = hot_parts(data, template_required=not patch)
    if patch:
        merged = dict(before.hot)
        if "template" in given:
            merged["template"] = given["template"]
        for key in ("parameters", "files"):
            if key in given:
                merged[key] = {**before.hot.get(key, {}), **given[key]}
        if "environments" in given:  # the new ones merged after the stored ones
            merged["environments"] = [*before.hot.get("environments", []), *given["environments"]]
            if len(merged["environments"]) > MAX_ENVIRONMENTS:
                raise HeatBadRequest(
                    f"at most {MAX_ENVIRONMENTS} environments in all: send the whole stack (PUT)"
                )
        clear = data.get("clear_parameters") or []
        if not isinstance(clear, list):
            raise HeatBadRequest("'clear_parameters' is a list of parameter names")
        if clear and "parameters" in merged:
            merged["parameters"] = {
                k: v for k, v in merged["parameters"].items() if k not in set(clear)
            }
        given = merged
    return StackBody(
        before.name,
        given,
        _flag(data, "disable_rollback", before.disable_rollback),
        _timeout(data) if "timeout_mins" in data else before.timeout_mins,
        tags_of(data["tags"]) if "tags" in data else before.tags,
    )

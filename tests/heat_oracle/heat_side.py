"""Heat 27's own reading of templates: run with the Heat venv's Python, never Shoal's.

Reads a JSON list of cases on stdin (`{"id", "template", "environments", "parameters",
"stack_name"}`, paths on disk), gathers files and environments with heatclient's
template_utils (as `openstack stack create -t -e` does), builds Heat's Template, Environment
and Stack in-process (no database, RPC or cloud: custom constraints such as flavor and image
pass, every service counts as available) and validates the stack as Heat's validate API does
(`validate_res_tmpl_only=True`), nested stacks included as Heat validates them before a
create. Prints one JSON object: case id -> what Heat read (accepted or the error, the
resources that exist after conditions with the properties Shoal maps, and the outputs that
need no run time, through `get_value()`).
"""

from __future__ import annotations

import json
import logging
import sys
import warnings

warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)

from heat.common import config as _config  # noqa: E402,F401  (registers Heat's options)
from oslo_config import cfg  # noqa: E402

cfg.CONF([], project="heat", default_config_files=[])

from heat.common import context, grouputils  # noqa: E402
from heat.engine import constraints, environment, resource, resources, template  # noqa: E402
from heat.engine import stack as parser  # noqa: E402
from heat.engine.resources import stack_resource, template_resource  # noqa: E402
from heat.engine.resources.openstack.heat import resource_group  # noqa: E402
from heatclient.common import template_utils  # noqa: E402

resources.initialise()

# The cloud's catalogue is not here: every custom constraint (flavor, image, network, ...)
# passes and every service is available.
constraints.CustomConstraint._is_valid = lambda self, value, schema, ctx: True
resource.Resource.is_service_available = classmethod(lambda cls, ctx: (True, None))
# Before a create there is no nested stack whose members a removal policy could name (Heat
# asks its engine over RPC for them).
resource_group.ResourceGroup._name_skiplist = lambda self: set()
grouputils.GroupInspector.from_parent_resource = classmethod(
    lambda cls, parent: cls(parent.context, None, None)  # no nested stack yet: no members
)

MAPPED = {
    "OS::Nova::Server": ("name", "flavor", "image", "metadata", "availability_zone"),
    "OS::Cinder::Volume": ("size", "volume_type", "availability_zone"),
    "OS::Nova::ServerGroup": ("policies",),
    "OS::Heat::ResourceGroup": ("count",),
    "OS::Heat::SoftwareDeployment": ("input_values", "actions"),
    "OS::Heat::StructuredDeployment": ("input_values", "actions"),
    "OS::Heat::SoftwareDeploymentGroup": ("input_values", "actions"),
    "OS::Heat::StructuredDeploymentGroup": ("input_values", "actions"),
    "OS::Heat::SoftwareConfig": ("group", "config"),
    "OS::Heat::Value": ("value",),
}
RUN_TIME = ("get_attr", "get_resource", "resource_facade", "Fn::GetAtt", "Ref", "OS::stack_id")

NESTED: dict[int, list[tuple[str, object]]] = {}
"""id(parent stack) -> (resource name, nested stack) validated under it."""

_original_validate_template = resource.Resource.validate_template


def _validate_template(self):  # type: ignore[no-untyped-def]
    result = _original_validate_template(self)
    if isinstance(self, stack_resource.StackResource):
        self.validate_nested_stack()
    return result


def _parse_nested(self, stack_name, child_template, child_params, *a, **kw):  # type: ignore[no-untyped-def]
    nested = _original_parse_nested(self, stack_name, child_template, child_params, *a, **kw)
    NESTED.setdefault(id(self.stack), []).append((self.name, nested))
    original = nested.validate
    nested.validate = lambda *a2, **kw2: original(validate_res_tmpl_only=True)
    return nested


_original_parse_nested = stack_resource.StackResource._parse_nested_stack
resource.Resource.validate_template = _validate_template
stack_resource.StackResource._parse_nested_stack = _parse_nested


def _plain(value):  # type: ignore[no-untyped-def]
    """JSON-able: Heat's property values are plain, except a few of its own types."""
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def _run_time(value) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(value, dict):
        return any(k in RUN_TIME or _run_time(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_run_time(v) for v in value)
    return value in ("OS::stack_id",)


def _resources(stk, prefix: str, out: dict[str, object], raw=None) -> None:  # type: ignore[no-untyped-def]
    """`raw`: the template's resources as written (a property that calls a run-time function
    is `<run time>`: before a create Heat resolves its `get_attr` to null)."""
    for name, res in stk.resources.items():
        written = (raw or {}).get(name)
        written = written.get("properties") if isinstance(written, dict) else None
        kind = res.type()
        if isinstance(res, template_resource.TemplateResource):
            kind = "nested"
        else:
            # Through the registry, as Shoal names what it builds (My::Off -> OS::Heat::None).
            info = stk.env.get_resource_info(kind, resource_name=name)
            kind = getattr(info, "name", kind) or kind
        entry: dict[str, object] = {"type": kind}
        keys = MAPPED.get(kind, ())
        props: dict[str, object] = {}
        for key in keys:
            try:
                props[key] = _plain(res.properties[key])
            except Exception as ex:
                props[key] = f"<error {type(ex).__name__}>"
            if isinstance(written, dict) and _run_time(written.get(key)):
                props[key] = "<run time>"
        if kind == "OS::Nova::Server" and isinstance(props.get("metadata"), dict):
            # As Heat sends it to Nova (meta_serialize): text as it is, the rest as JSON.
            props["metadata"] = {
                k: v if isinstance(v, str) else json.dumps(v) for k, v in props["metadata"].items()
            }
        if props:
            entry["properties"] = props
        out[prefix + name] = entry
    for name, nested in NESTED.get(id(stk), []):
        _resources(nested, f"{prefix}{name}/", out)


def _outputs(stk, raw: dict[str, object]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The outputs that need no run time. Every output is computed (attributes are null
    before a create, which Heat's functions accept): one Heat cannot compute fails on every
    stack made from the template, so it counts as Heat refusing the template."""
    out: dict[str, object] = {}
    for name, output in stk.outputs.items():
        value = _plain(output.get_value())
        definition = raw.get(name)
        if not (isinstance(definition, dict) and _run_time(definition.get("value"))):
            out[name] = value
    return out


def one(case: dict[str, object]) -> dict[str, object]:
    NESTED.clear()
    try:
        files, tmpl = template_utils.get_template_contents(template_file=case["template"])
        env_files, env = template_utils.process_multiple_environments_and_files(
            env_paths=case.get("environments") or []
        )
        files.update(env_files)
        # The API receives files as JSON text, whatever the client read them as.
        files = {k: v.decode() if isinstance(v, bytes) else v for k, v in files.items()}
        env = dict(env)
        env.setdefault("parameters", {}).update(case.get("parameters") or {})
        env.setdefault("parameter_defaults", {}).update(case.get("parameter_defaults") or {})
        ctx = context.RequestContext(
            user_id="u", project_id="p", is_admin=True, auth_token_info={}, auth_token="t"
        )
        t = template.Template(tmpl, files=files, env=environment.Environment(env))
        stk = parser.Stack(ctx, str(case["stack_name"]), t)
        stk.validate(validate_res_tmpl_only=True)
    except Exception as ex:
        return {"accepted": False, "error": f"{type(ex).__name__}: {ex}"[:500]}
    out: dict[str, object] = {"accepted": True}
    found: dict[str, object] = {}
    try:
        raw = tmpl.get("outputs") or {}
        out["outputs"] = _outputs(stk, raw if isinstance(raw, dict) else {})
    except Exception as ex:
        return {"accepted": False, "error": f"output: {type(ex).__name__}: {ex}"[:500]}
    try:
        raw_resources = tmpl.get("resources")
        _resources(stk, "", found, raw_resources if isinstance(raw_resources, dict) else None)
        out["resources"] = found
    except Exception as ex:
        out["read_error"] = f"{type(ex).__name__}: {ex}"[:500]
    return out


def main() -> None:
    cases = json.load(sys.stdin)
    answers = {}
    for case in cases:
        answers[case["id"]] = one(case)
    json.dump(answers, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()

"""What Heat's API describes of itself: template versions and their functions, resource types
(those Shoal reads) with their schemas and a template of each, and build info.

Function descriptions are Heat's (the first line of each function class's docstring), so a
client comparing them finds Heat's words. Resource type schemas are Heat 27's for the types its
own tests lean on (TestResource, Value, RandomString, None, ResourceGroup); the other types Shoal
reads are listed with their support status and no property schema (docs/heat_api.md).
"""

from __future__ import annotations

from typing import Any

from shoal.documents.hot.heat_types import HEAT_TYPES
from shoal.documents.hot.template import HANDLERS
from shoal.documents.hot.versions import VERSIONS, Version, version_of
from shoal.service.heat.errors import EntityNotFound, HeatBadRequest

_DESCRIPTIONS: dict[str, str] = {
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "list_join": "A function for joining strings.",
    "repeat": "A function for iterating over a list of items.",
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "str_replace": "A function for performing string substitutions.",
    "str_replace_strict": "A function for performing string substitutions.",
    "str_replace_vstrict": "A function for performing string substitutions.",
    "digest": "A function for performing digest operations.",
    "str_split": "A function for splitting delimited strings into a list.",
    "map_merge": "A function for merging maps.",
    "map_replace": "A function for performing substitutions on maps.",
    "yaql": "A function for executing a yaql expression.",
    "equals": "A function for comparing whether two values are equal.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "not": "A function to act as a NOT operator.",
    "and": "A function to act as an AND operator.",
    "or": "A function to act as an OR operator.",
    "filter": "A function for filtering out values from lists.",
    "make_url": "A function for performing substitutions on maps.",
    "list_concat": "A function for extending lists.",
    "list_concat_unique": "A function for extending lists with unique items.",
    "contains": "A function for checking whether specific value is in sequence.",
    "Fn::Select": "A function for selecting an item from a list or map.",
    "Fn::Join": "A function for joining strings.",
}

_CONDITION_ONLY = ("equals", "not", "and", "or", "contains", "yaql", "get_param")


def template_versions() -> list[dict[str, Any]]:
    out = []
    seen: set[str] = set()
    for name, v in VERSIONS.items():
        if v.date in seen:
            continue
        seen.add(v.date)
        out.append(
            {
                "version": f"heat_template_version.{v.date}",
                "type": "hot",
                "aliases": [f"heat_template_version.{v.alias}"] if v.alias else [],
            }
        )
        del name
    return out


def _version(name: str) -> Version:
    prefix = "heat_template_version."
    found = version_of(name.removeprefix(prefix)) if name.startswith(prefix) else None
    if found is None:
        raise EntityNotFound(f"The Template version ({name}) could not be found.")
    return found


def template_functions(name: str, conditions: bool) -> list[dict[str, str]]:
    v = _version(name)
    names = sorted(v.condition_functions) if conditions else sorted(v.functions)
    return [
        {"functions": f, "description": _DESCRIPTIONS.get(f, f"The function {f}.")} for f in names
    ]


def _p(kind: str, description: str, default: object = None, **more: object) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": kind,
        "description": description,
        "required": bool(more.pop("required", False)),
        "update_allowed": bool(more.pop("update_allowed", True)),
        "immutable": False,
    }
    if default is not None:
        schema["default"] = default
    schema.update(more)
    return schema


_SCHEMAS: dict[str, tuple[str, dict[str, Any], dict[str, str], str]] = {
    "OS::Heat::TestResource": (
        "A resource which stores the string value that was provided.",
        {
            "value": _p("string", "The input string to be stored.", "test_string"),
            "fail": _p(
                "boolean",
                "Value which can be set to fail the resource operation to test failure scenarios.",
                False,
            ),
            "update_replace": _p(
                "boolean",
                "Value which can be set to trigger update replace for the particular resource.",
                False,
            ),
            "update_replace_value": _p(
                "string",
                "Some value that can be stored but can not be updated.",
                None,
                update_allowed=False,
            ),
            "wait_secs": _p("number", "Seconds to wait after an action (-1 is infinite).", 0),
            "action_wait_secs": _p(
                "map",
                "Options for simulating waiting.",
                None,
                schema={
                    k: _p(
                        "number", f"Seconds to wait after a {k}. Defaults to the global wait_secs."
                    )
                    for k in ("create", "update", "delete")
                },
            ),
            "attr_wait_secs": _p(
                "number", "Number value for timeout during resolving output value.", 0
            ),
            "client_name": _p("string", "Client to poll.", ""),
            "entity_name": _p("string", "Client entity to poll.", ""),
            "constraint_prop_secs": _p(
                "number", "Number value for delay during resolve constraint.", 0
            ),
        },
        {
            "output": "The string that was stored. This value is also available by "
            "referencing the resource.",
        },
        "5.0.0",
    ),
    "OS::Heat::Value": (
        "A resource which exposes its value property as an attribute.",
        {
            "value": _p("any", 'The expression to generate the "value" attribute.', required=True),
            "type": _p(
                "string",
                "The type of the value property.",
                None,
                constraints=[
                    {
                        "allowed_values": [
                            "string",
                            "number",
                            "comma_delimited_list",
                            "json",
                            "boolean",
                        ]
                    }
                ],
            ),
        },
        {"value": 'The value generated by this resource\'s properties "value" attribute.'},
        "7.0.0",
    ),
    "OS::Heat::RandomString": (
        "A resource which generates a random string.",
        {
            "length": _p(
                "integer",
                "Length of the string to generate.",
                32,
                update_allowed=False,
                constraints=[{"range": {"min": 1, "max": 512}}],
            ),
            "character_classes": _p(
                "list",
                "A list of character class and their constraints "
                "to generate the random string from.",
                None,
                update_allowed=False,
            ),
            "character_sequences": _p(
                "list",
                "A list of character sequences and their "
                "constraints to generate the random string from.",
                None,
                update_allowed=False,
            ),
            "salt": _p(
                "string",
                "Value which can be set or changed on stack update to trigger "
                "the resource for replacement with a new random string.",
                None,
            ),
        },
        {
            "value": "The random string generated by this resource. This value is also "
            "available by referencing the resource."
        },
        "2014.1",
    ),
    "OS::Heat::None": (
        "Enables easily disabling certain resources via the resource_registry.",
        {},
        {},
        "5.0.0",
    ),
    "OS::Heat::ResourceGroup": (
        "Creates one or more identically configured nested resources.",
        {
            "count": _p(
                "integer",
                "The number of resources to create.",
                1,
                constraints=[{"range": {"min": 0}}],
            ),
            "index_var": _p(
                "string",
                "A variable that this resource will use to replace with "
                "the current index of a given resource in the group.",
                "%index%",
                update_allowed=False,
            ),
            "resource_def": _p(
                "map", "Resource definition for the resources in the group.", None, required=True
            ),
            "removal_policies": _p("list", "Policies for removal of resources on update.", []),
            "removal_policies_mode": _p(
                "string", "How to handle changes to removal_policies on update.", "append"
            ),
        },
        {
            "refs": "A list of resource IDs for the resources in the group.",
            "refs_map": "A map of resource names to IDs for the resources in the group.",
            "attributes": "A map of resource names to the specified attribute of each "
            "individual resource.",
            "removed_rsrc_list": "A list of removed resource names.",
        },
        "2014.1",
    ),
}


def served_types() -> list[str]:
    """The Heat types Shoal reads, sorted: what `GET /resource_types` lists."""
    return sorted(t for t in HANDLERS if t in HEAT_TYPES)


def resource_type(name: str) -> dict[str, Any]:
    if name not in served_types():
        raise EntityNotFound(f"The Resource Type ({name}) could not be found.")
    description, props, attrs, since = _SCHEMAS.get(name, ("", {}, {}, ""))
    attributes = {k: {"description": v, "type": None} for k, v in attrs.items()}
    attributes["show"] = {"description": "Detailed information about resource.", "type": "map"}
    return {
        "resource_type": name,
        "description": description,
        "properties": props,
        "attributes": attributes,
        "support_status": {
            "status": "SUPPORTED",
            "version": since or None,
            "message": None,
            "previous_status": None,
        },
    }


def type_template(name: str, template_type: str) -> dict[str, Any]:
    if template_type not in ("hot", "cfn"):
        raise HeatBadRequest(f"Template type is not supported: {template_type}")
    if template_type == "cfn":
        raise HeatBadRequest("Shoal reads HOT templates only (template_type=hot)")
    shown = resource_type(name)
    short = name.rsplit("::", 1)[-1]
    params = {
        k: {"type": _param_type(v["type"]), "description": v["description"]}
        | ({"default": v["default"]} if "default" in v else {})
        for k, v in shown["properties"].items()
    }
    return {
        "heat_template_version": "2016-10-14",
        "description": f"Initial template of {short}",
        "parameters": params,
        "resources": {short: {"type": name, "properties": {k: {"get_param": k} for k in params}}},
        "outputs": {
            k: {"description": v["description"], "value": {"get_attr": [short, k]}}
            for k, v in shown["attributes"].items()
        },
    }


def _param_type(kind: str) -> str:
    return {
        "integer": "number",
        "list": "comma_delimited_list",
        "map": "json",
        "any": "json",
    }.get(kind, kind)


def build_info(version: str) -> dict[str, Any]:
    return {"api": {"revision": version}, "engine": {"revision": version}}

"""Environments for native documents: parameter values and roles remapped to concrete shapes.

An environment is a small document given with `-e` (CLI) or in a request's `environment`
list (API); several merge in order, later ones winning per parameter and per role field:

    parameters: {db_password: s3cret}        # values; an undeclared name is a mistake
    parameter_defaults: {replicas: 3}        # defaults; ignored where not declared
    roles:
      Controller: {count: 3, anti_affinity: host}   # a node group of 3, one per host
      # or: Controller: {shape: instance}           # one server, named like the group

A role is the `role:` of a node group; remapping it changes only the node group's shape, so
the deployments that target it (by the group's name) are unchanged. Problems point into the
environment list as `/environment/N/...`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from shoal.documents.collect import ProblemList, child
from shoal.documents.fields import mapping
from shoal.documents.params import MAX_PARAMETERS
from shoal.documents.tree import is_list, is_mapping, pairs_of
from shoal.model.enums import Scope

MAX_ENVIRONMENTS = 20
MAX_ROLES = 100
ENVIRONMENT_PATH = "/environment"


class Shape(StrEnum):
    GROUP = "group"
    INSTANCE = "instance"


@dataclass(slots=True)
class RoleShape:
    """What a role becomes: fields left None keep the document's own."""

    role: str
    path: str
    shape: Shape = Shape.GROUP
    count: int | None = None
    anti_affinity: Scope | None = None
    profile: object | None = None
    used: bool = False


@dataclass(slots=True)
class Environment:
    """Every environment merged: values and defaults with where they were given."""

    parameters: dict[str, tuple[object, str]] = field(default_factory=dict)
    parameter_defaults: dict[str, tuple[object, str]] = field(default_factory=dict)
    roles: dict[str, RoleShape] = field(default_factory=dict)


def read_environments(
    docs: Sequence[object], out: ProblemList, path: str = ENVIRONMENT_PATH
) -> Environment:
    env = Environment()
    if len(docs) > MAX_ENVIRONMENTS:
        out.add(path, f"at most {MAX_ENVIRONMENTS} environments, found {len(docs)}")
        return env
    for i, doc in enumerate(docs):
        _merge(env, doc, child(path, i), out)
    return env


def _merge(env: Environment, doc: object, path: str, out: ProblemList) -> None:
    f = mapping(doc, path, out, "an environment")
    if f is None:
        return
    for key, target in (
        ("parameters", env.parameters),
        ("parameter_defaults", env.parameter_defaults),
    ):
        raw = f.raw(key)
        if raw is None:
            continue
        values = mapping(raw, f.at(key), out, f"'{key}'")
        if values is None:
            continue
        entries = values.entries()
        if len(entries) > MAX_PARAMETERS:
            out.add(f.at(key), f"at most {MAX_PARAMETERS} values, found {len(entries)}")
            continue
        for name, value in entries:
            target[name] = (value, values.at(name))
    raw_roles = f.raw("roles")
    f.finish()
    if raw_roles is None:
        return
    roles = mapping(raw_roles, f.at("roles"), out, "'roles'")
    if roles is None:
        return
    if len(roles.entries()) > MAX_ROLES:
        out.add(f.at("roles"), f"at most {MAX_ROLES} roles, found {len(roles.entries())}")
        return
    for role, body in roles.entries():
        _role(env, role, body, roles.at(role), out)


def _role(env: Environment, role: str, body: object, path: str, out: ProblemList) -> None:
    r = mapping(body, path, out, "a role's shape")
    if r is None:
        return
    shape = env.roles.get(role) or RoleShape(role, path)
    shape.path = path
    given = r.choice("shape", Shape)
    if given is not None:
        shape.shape = given
    count = r.integer("count", minimum=0, maximum=1_000_000)
    if count is not None:
        shape.count = count
    scope = r.choice("anti_affinity", Scope)
    if scope is not None:
        shape.anti_affinity = scope
    if r.has("profile"):
        shape.profile = r.raw("profile")
    r.finish()
    if shape.shape is Shape.INSTANCE:
        if count is not None and count != 1:
            r.problem("count", "a role shaped as an instance is one server; drop 'count'")
        if scope is not None:
            r.problem("anti_affinity", "one instance needs no anti-affinity; drop it")
        if given is Shape.INSTANCE:
            shape.count, shape.anti_affinity = None, None
    env.roles[role] = shape


REQUEST_KEYS = frozenset({"document", "environment"})


def unwrap_request(data: object) -> tuple[object, list[object], bool] | None:
    """A request body `{document: DOC, environment: [ENV, ...]}` as its parts (the list as
    given, and whether it was a list), or None when `data` is a document itself."""
    if not is_mapping(data):
        return None
    items = dict((k, v) for k, v in pairs_of(data) if isinstance(k, str))
    if (
        "document" not in items
        or not set(items) <= REQUEST_KEYS
        or len(items) != len(pairs_of(data))
    ):
        return None
    if not is_mapping(items["document"]):
        return None
    envs = items.get("environment")
    if envs is None:
        return items["document"], [], True
    if is_list(envs):
        return items["document"], list(envs), True
    return items["document"], [envs], False

"""Following `get_attr` of a nested template's output to what it names inside (TripleO's style).

TripleO puts a role's servers in a nested template (a registry type, `OS::TripleO::Controller:
roles/controller.yaml`) and its software deployments at the top level, fed the role's servers
through the role's outputs: `servers: {get_attr: [Controller, servers]}`, where the role's
output `servers` is `{get_attr: [ControllerGroup, refs_map]}` of its ResourceGroup, or a map of
its own servers. Heat resolves this at run time; Shoal follows it before anything exists: the
output's evaluated value (kept symbolic, `Shape.evaluated`) names a resource of the nested
template, whose element carries the nested resource's prefix (`Controller`, or
`Controller-ControllerGroup` when the role has several elements). Outputs of outputs (a role
nesting another) are followed too, as deep as templates nest.

A `get_attr: [G, attributes, OUTPUT]` of a ResourceGroup whose member is a nested template
(TripleO's `nova_server_resource`) names the group when the member's OUTPUT is its server. A
path into an output (`[Controller, info, ports, 0]`) steps into its known value. The other way
round, a nested template's `get_param` of what its parent passed in (`{get_resource: web}`) is
read in the parent. What is not followed is `NotRead`, worded "Shoal does not read X yet".
"""

from __future__ import annotations

from dataclasses import dataclass

from shoal.documents.hot.context import MAX_NESTING
from shoal.documents.hot.environment import is_file_ref
from shoal.documents.hot.functions import NOWHERE, step_into
from shoal.documents.hot.shapes import Shape
from shoal.documents.hot.values import Attr, Ref, is_symbolic


@dataclass(frozen=True, slots=True)
class Inside:
    """A value as it reads inside the template that holds it."""

    shape: Shape
    value: object
    output: str | None = None
    """The nested template's output `value` is (None: `value` was not an output)."""


@dataclass(frozen=True, slots=True)
class NotRead:
    """What of a nested template's output Shoal does not follow (worded "Shoal does not read
    {what} yet")."""

    what: str
    wrong: bool = False
    """The template is wrong (Heat refuses it too): `what` is the whole message."""
    unread: bool = False
    """The nested template itself could not be read (reported where it was): say nothing."""


def follow(shape: Shape, value: object, shapes: dict[str, Shape] | None = None) -> Inside | NotRead:
    """`value` (read in `shape`) with every `get_attr` of a nested template's output replaced by
    the output's value inside that template; unchanged when it is not one. With `shapes`
    (every template read, by scope), a value a parent passed in (`get_param` of its
    `get_resource`/`get_attr`) is read in the parent."""
    last: str | None = None
    for _ in range(2 * MAX_NESTING + 2):
        if shapes and isinstance(value, Attr | Ref) and value.scope != shape.scope:
            shape = shapes.get(value.scope, shape)
        if not isinstance(value, Attr) or value.scope != shape.scope:
            return Inside(shape, value, last)
        nested = next((n for n in shape.nested if n.name == value.name), None)
        if nested is None and is_file_ref(shape.kinds.get(value.name, "")):
            # a nested template that could not be read: its problem is reported already
            return NotRead(f"nested template {value.name}", unread=True)
        if nested is None:
            return Inside(shape, value, last)
        if not value.path:
            return NotRead(f"get_attr of nested template {value.name} without an output name")
        output, rest = str(value.path[0]), value.path[1:]
        if output not in nested.shape.evaluated:
            return NotRead(
                f"get_attr names '{output}' of {value.name}, whose template has no output "
                f"'{output}'",
                wrong=True,
            )
        shape, value, last = nested.shape, nested.shape.evaluated[output], output
        for key in rest:  # a path into the output, as Heat's get_attr takes it
            if is_symbolic(value):
                where = f"output '{output}' of {nested.name}"
                return NotRead(f"a path into {where}, a value known only at run time,")
            if isinstance(value, list) and isinstance(key, str) and key.isdigit():
                key = int(key)
            value = step_into(value, key)
            if value is NOWHERE:
                value = None  # Heat's value for a path that leads nowhere
                break
    return NotRead("outputs of outputs nested this deep")


def shapes_by_scope(shape: Shape) -> dict[str, Shape]:
    """Every template read (nested ones and group members too), by scope."""
    found = {shape.scope: shape}
    for n in shape.nested:
        found.update(shapes_by_scope(n.shape))
    for g in shape.groups:
        for scope, inner in shapes_by_scope(g.member).items():
            found.setdefault(scope, inner)
    return found


def server_of(shape: Shape, value: object) -> str | None:
    """The server of `shape` that `value` names (its id: `get_resource`, `get_attr [S, id]`)."""
    named = isinstance(value, Ref) or (isinstance(value, Attr) and value.path in ((), ("id",)))
    if not named or not isinstance(value, Ref | Attr) or value.scope != shape.scope:
        return None
    return value.name if value.name in {s.name for s in shape.servers} else None


def group_by_member_output(shape: Shape, value: object) -> str | None:
    """The ResourceGroup of `shape` named by `get_attr: [G, attributes, OUTPUT]` where each
    member's OUTPUT is its one server (a map index -> server id, as `refs_map`)."""
    if not isinstance(value, Attr) or value.scope != shape.scope or len(value.path) != 2:
        return None
    if value.path[0] != "attributes":
        return None
    group = next((g for g in shape.groups if g.name == value.name), None)
    if group is None:
        return None
    server = server_of(group.member, group.member.evaluated.get(str(value.path[1])))
    return value.name if server is not None else None

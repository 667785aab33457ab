"""What every resource handler is given: the resource, its stack, and the whole reading.

Handlers live in their own modules (compute, groups, heat, senlin, software, nested) and see
the stack only through `StackView`, so adding a handler never touches the reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from shoal.documents.collect import child
from shoal.documents.hot.environment import Environment
from shoal.documents.hot.files import Files
from shoal.documents.hot.functions import BROKEN, Budget
from shoal.documents.hot.parameters import Parameter
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import Shape
from shoal.documents.hot.values import is_symbolic, shown
from shoal.documents.hot.versions import Version
from shoal.documents.tree import describe
from shoal.model.inventory import Inventory

MAX_NESTING = 10


@dataclass(slots=True)
class Wants:
    """Catalog names the templates ask for, found or not (a corpus run builds an inventory)."""

    flavors: set[str] = field(default_factory=set)
    images: set[str] = field(default_factory=set)
    zones: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Context:
    env: Environment
    files: Files
    inventory: Inventory
    report: Report
    wants: Wants = field(default_factory=Wants)
    budget: Budget = field(default_factory=Budget)
    stack_name: str = "stack"
    """The top stack's name (`OS::stack_name`): the cluster's name, as Heat's stack name."""


@dataclass(slots=True)
class Resource:
    name: str
    type: str
    """The type after the environment's registry (what is built)."""
    written: str
    """The type as the template wrote it."""
    path: str
    raw: dict[str, object]


class StackView(Protocol):
    ctx: Context
    shape: Shape
    scope: str
    version: Version
    depth: int
    params: dict[str, Parameter]

    @property
    def name(self) -> str:
        """The scope's unique id (what `Ref.scope` holds)."""
        ...

    def type_of(self, resource: str) -> str | None: ...

    def path_of(self, resource: str) -> str: ...

    def properties_of(self, resource: str) -> dict[str, object] | None: ...

    def member(
        self, res: Resource, kind: str, props: dict[str, object], path: str
    ) -> Shape | None: ...

    def bind_policy(self, policy: str, cluster: str, path: str) -> None: ...

    def nested(
        self, resource: Resource, target: str, props: dict[str, object], path: str
    ) -> Shape | None: ...


def check_props(
    res: Resource,
    props: dict[str, object],
    report: Report,
    known: frozenset[str],
    required: tuple[str, ...] = (),
) -> bool:
    """Unknown and missing properties of `res`, each a problem; True when there are none."""
    ok = True
    where = child(res.path, "properties")
    for key in props:
        if key not in known:
            report.problem(child(where, str(key)), f"{res.written} has no property '{key}'")
            ok = False
    for key in required:
        if props.get(key) is None:
            report.problem(where, f"{res.written} needs the property '{key}'")
            ok = False
    return ok


def concrete_text(
    value: object, path: str, report: Report, what: str, *, empty_ok: bool = False
) -> str | None:
    """A text Shoal must know before anything exists (a flavor, an image name, a zone)."""
    if value is None:
        return None
    if is_symbolic(value):
        if value != BROKEN:
            report.cannot(
                f"{what} known only at run time",
                path,
                f"the {what} must be known before the cluster exists; "
                f"this one comes from {describe_symbolic(value)}",
            )
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or (not value and not empty_ok):
        report.problem(path, f"the {what} must be text, found {describe(value)}")
        return None
    return value


def describe_symbolic(value: object) -> str:
    return str(shown(value))

"""The evaluator of Heat's intrinsic functions: the walk, the version gate, the work budget.

A mapping with one key that names a function is a call. The function must exist in the
template's version (`versions.py`), its arguments must have the documented shape, and a bad
call is one problem at its pointer; the evaluation then carries on with a broken value so
every other problem is still found. Values only a cloud knows (a resource's id, an attribute)
stay symbolic (`values.py`); `yaql` is not evaluated (no yaql engine here) and is reported as
unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from shoal.documents.collect import child
from shoal.documents.hot.report import Report
from shoal.documents.hot.sizes import MAX_VALUE_DEPTH, Sizes
from shoal.documents.hot.values import OMIT, Unknown
from shoal.documents.hot.versions import ALL_FUNCTIONS, Version, introduced_in
from shoal.documents.tree import describe, is_list, is_mapping, pairs_of

BROKEN = Unknown("a value with a problem reported above")
MAX_DEPTH = 64
MAX_ITEMS = 100_000
MAX_STEPS = 2_000_000
MAX_TOTAL_RESOURCES = 1_000
"""Resources of a template and all its nested templates (Heat's max_resources_per_stack): a
fan-out of nested templates (50 of 50 of 50...) is refused after a thousand, in well under a
second, not read for minutes."""
MAX_CHARS = 8 << 20
"""Characters the functions of one reading may make or hand out in all: text joined or
replaced, and every value passed on by `get_param`, `get_attr`, `get_file` or a `repeat`, as
written out (sizes.py). Counted before the value is built or passed on, so a bomb is refused,
not run."""
MAX_VALUE_ITEMS = 250_000
"""Items (list items, mapping entries, scalars) the functions of one reading may make or hand
out in all, counted as MAX_CHARS is: what every later walk of the values (JSON, comparisons,
the cluster's metadata) costs is bounded by it."""


@dataclass(slots=True)
class Budget:
    """The work one reading may do (shared by every template it nests), so no template, however
    it nests `repeat`s or templates, can keep the reader busy for long."""

    steps: int = MAX_STEPS
    overrun: bool = False
    chars: int = MAX_CHARS
    items: int = MAX_VALUE_ITEMS
    oversize: bool = False
    resources: int = MAX_TOTAL_RESOURCES
    depth: int = 0
    """Functions (and values) being evaluated inside one another, across every evaluator of
    the reading: a condition naming a condition, or a Value's `get_attr` of another, nests."""
    sizes: Sizes = field(default_factory=Sizes)

    def spend(self, n: int) -> bool:
        self.steps -= n
        return self.steps >= 0

    def first_overrun(self) -> bool:
        """True once, the first time the budget is found spent (one problem, not thousands)."""
        first, self.overrun = not self.overrun, True
        return first


class Scope(Protocol):
    """What a template offers its functions: parameters, resources, conditions, files."""

    version: Version

    @property
    def name(self) -> str: ...

    def param(self, name: str, path: str) -> object: ...

    def has_resource(self, name: str) -> bool: ...

    def type_of(self, resource: str) -> str | None: ...

    def attribute(self, resource: str, path: tuple[object, ...]) -> object: ...

    def condition(self, name: str, path: str) -> bool | None: ...

    def file(self, name: str) -> str | None: ...

    @property
    def is_top(self) -> bool:
        """The top template (no parent resource for `resource_facade`)."""
        ...


def plain(value: object) -> object:
    """A parsed tree with `Pairs` turned into dicts (a repeated key: the last one wins)."""
    if is_mapping(value):
        return {k: plain(v) for k, v in pairs_of(value)}
    if is_list(value):
        return [plain(v) for v in value]
    return value


def call_of(value: object) -> tuple[str, object] | None:
    """(function name, arguments) when `value` is a function call, else None."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, args),) = value.items()
        if isinstance(key, str) and (key in ALL_FUNCTIONS or key.startswith("Fn::")):
            return key, args
    return None


class Evaluator:
    """Evaluates plain trees (see `plain`) in one template scope, reporting into `report`."""

    def __init__(self, scope: Scope, report: Report, budget: Budget | None = None):
        self.scope = scope
        self.report = report
        self.budget = budget or Budget()

    # --- the walk ---------------------------------------------------------------------

    def ev(self, value: object, path: str) -> object:
        self.budget.depth += 1
        try:
            if not self.budget.spend(1):
                if self.budget.first_overrun():
                    self.report.problem(
                        path, f"the template takes more than {MAX_STEPS} evaluation steps"
                    )
                return BROKEN
            if self.budget.depth > MAX_DEPTH:
                self.report.problem(path, f"functions are nested deeper than {MAX_DEPTH} levels")
                return BROKEN
            found = call_of(value)
            if found is not None:
                return self._call(found[0], found[1], child(path, found[0]))
            if isinstance(value, dict):
                out: dict[object, object] = {}
                for k, v in value.items():
                    r = self.ev(v, child(path, str(k)))
                    if r is not OMIT:
                        out[k] = r
                return out
            if isinstance(value, list):
                items = [self.ev(v, child(path, i)) for i, v in enumerate(value)]
                return [v for v in items if v is not OMIT]
            return value
        finally:
            self.budget.depth -= 1

    def _call(self, name: str, args: object, path: str) -> object:
        version = self.scope.version
        if name not in version.functions:
            since = introduced_in(name)
            if since is None:
                self.report.problem(path, f"unknown function '{name}'")
            elif version.at_least(since):
                self.report.problem(
                    path, f"function '{name}' was removed in templates of version {version.label}"
                )
            else:
                self.report.problem(
                    path,
                    f"function '{name}' needs heat_template_version {since} or later; "
                    f"this template is {version.label}",
                )
            return BROKEN
        handler = HANDLERS.get(name)
        if handler is None:
            if name == "yaql":
                if (
                    not isinstance(args, dict)
                    or "expression" not in args
                    or not set(args)
                    <= {
                        "expression",
                        "data",
                    }
                ):
                    return self.fail(path, "'yaql' takes a mapping with 'expression' and 'data'")
                self.report.cannot(
                    "function yaql",
                    path,
                    "Shoal does not read function 'yaql' yet (it has no yaql engine)",
                )
            elif name == "resource_facade":
                return _facade(self, args, path)
            else:
                self.report.cannot(
                    f"function {name}", path, f"Shoal does not read function '{name}' yet"
                )
            return BROKEN
        return handler(self, args, path)

    def will_make(self, size: int, path: str, fn: str, items: int = 0) -> bool:
        """Charge `size` characters and `items` items that `fn` is about to make or hand
        out; False (and one problem at `path`) once the reading has made more than MAX_CHARS
        characters or MAX_VALUE_ITEMS items in all."""
        self.budget.chars -= size
        self.budget.items -= items
        if self.budget.chars >= 0 and self.budget.items >= 0:
            return True
        if not self.budget.oversize:
            self.budget.oversize = True
            what = (
                f"{MAX_CHARS} characters"
                if self.budget.chars < 0
                else f"{MAX_VALUE_ITEMS} items (list items, mapping entries, scalars)"
            )
            self.report.problem(
                path,
                f"'{fn}' would make more than {what} in all across the template's functions "
                "(a value passed on by get_param, get_attr, get_file or repeat counts each "
                "time it is used)",
            )
        return False

    def hand_out(self, value: object, path: str, fn: str) -> object:
        """`value`, passed on by `fn` (a reference to a value that exists already), charged
        by its written-out size; BROKEN (one problem) when that overdraws the budget or the
        value nests deeper than MAX_VALUE_DEPTH."""
        if value == BROKEN:
            return value
        size = self.budget.sizes.of(value)
        if size.depth > MAX_VALUE_DEPTH:
            return self.fail(
                path,
                f"'{fn}' gives a value nested {size.depth} levels deep; at most {MAX_VALUE_DEPTH}",
            )
        return value if self.will_make(size.chars, path, fn, size.items) else BROKEN

    def produced(self, text: str, path: str, fn: str) -> object:
        """`text` as made by `fn`, or BROKEN when it overdraws the budget (see `will_make`)."""
        return text if self.will_make(len(text), path, fn) else BROKEN

    def fail(self, path: str, message: str) -> object:
        self.report.problem(path, message)
        return BROKEN

    def args_list(
        self, name: str, args: object, path: str, lo: int, hi: int
    ) -> list[object] | None:
        if call_of(args) is not None:  # the arguments may come from a function (a repeat)
            args = self.ev(args, path)
            if args == BROKEN:
                return None
        if isinstance(args, list):
            args = [a for a in args if a is not OMIT]
        if not isinstance(args, list) or not lo <= len(args) <= hi:
            n = str(lo) if lo == hi else f"{lo} to {hi}" if hi < 99 else f"at least {lo}"
            self.fail(path, f"'{name}' takes a list of {n} arguments, found {describe(args)}")
            return None
        return args

    def evaluated(
        self, name: str, args: object, path: str, lo: int, hi: int
    ) -> list[object] | None:
        """The arguments of `name`, checked for their number and each evaluated."""
        items = self.args_list(name, args, path, lo, hi)
        if items is None:
            return None
        return [self.ev(v, child(path, i)) for i, v in enumerate(items)]

    def truth(self, value: object, path: str, *, named: bool = True) -> bool | None:
        """A condition: a boolean, a condition function, or (`named`) a condition's name,
        written or given by a function (Heat's `is_enabled` of the resolved value)."""
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and named:
            return self.scope.condition(value, path)
        result = self.ev(value, path)
        if isinstance(result, bool):
            return result
        if isinstance(result, str) and named:
            return self.scope.condition(result, path)
        if result != BROKEN:
            self.fail(path, f"a condition must be true or false, found {describe(result)}")
        return None

    def decide(self, value: object, path: str) -> bool | None:
        """A condition where Heat parses one (a resource's or an output's `condition`, an
        `if`'s first argument): its functions checked (`only_condition_functions`), then
        evaluated."""
        if not self.only_condition_functions(value, path):
            return None
        return self.truth(value, path)

    def only_condition_functions(self, value: object, path: str) -> bool:
        """False (a problem at each) when `value` calls a function of the template's version
        that Heat does not allow in a condition (`str_replace`, `if`, `get_attr` ...)."""
        version = self.scope.version
        allowed = version.condition_functions
        ok = True
        todo: list[tuple[object, str]] = [(value, path)]
        while todo:
            v, at = todo.pop()
            found = call_of(v)
            if found is not None:
                name, args = found
                if name in version.functions and name not in allowed:
                    self.report.problem(
                        child(at, name),
                        f"the function '{name}' is invalid in a condition (Heat allows only "
                        f"{', '.join(sorted(allowed))})",
                    )
                    ok = False
                else:
                    todo.append((args, child(at, name)))
            elif isinstance(v, dict):
                todo.extend((x, child(at, str(k))) for k, x in v.items())
            elif isinstance(v, list):
                todo.extend((x, child(at, i)) for i, x in enumerate(v))
        return ok


FACADE = ("metadata", "deletion_policy", "update_policy")


def _facade(e: Evaluator, args: object, path: str) -> object:
    """`resource_facade`: known only inside a nested template, from its parent resource."""
    if args not in FACADE:
        return e.fail(path, f"'resource_facade' takes one of {', '.join(FACADE)}")
    if e.scope.is_top:
        return e.fail(path, "'resource_facade' is for a nested template: the top one has no parent")
    return Unknown("the facade of the parent resource")


Handler = Callable[[Evaluator, object, str], object]
HANDLERS: dict[str, Handler] = {}
"""Function name -> handler; filled by the fn_* modules (see functions.py)."""

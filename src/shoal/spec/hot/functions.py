"""Heat's intrinsic functions, evaluated without a cloud, as Heat documents them.

A mapping with one key that names a function is a call. The function must exist in the
template's version (`versions.py`), its arguments must have the documented shape, and a bad
call is one problem at its pointer; the evaluation then carries on with a broken value so
every other problem is still found. Values only a cloud knows (a resource's id, an attribute)
stay symbolic (`values.py`); `yaql` is not evaluated (no yaql engine here) and is reported as
unsupported.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote as urlquote

from shoal.spec.collect import child
from shoal.spec.hot.report import Report
from shoal.spec.hot.values import OMIT, Attr, Ref, Unknown, first_symbolic, unknown_from
from shoal.spec.hot.versions import ALL_FUNCTIONS, Version, introduced_in
from shoal.spec.tree import describe, is_list, is_mapping, pairs_of

BROKEN = Unknown("a value with a problem reported above")
MAX_DEPTH = 64
MAX_ITEMS = 100_000


MAX_STEPS = 2_000_000


@dataclass(slots=True)
class Budget:
    """The work one reading may do (shared by every template it nests), so no template, however
    it nests `repeat`s or templates, can keep the reader busy for long."""

    steps: int = MAX_STEPS
    overrun: bool = False

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

    def attribute(self, resource: str, path: tuple[object, ...]) -> object: ...

    def condition(self, name: str, path: str) -> bool | None: ...

    def file(self, name: str) -> str | None: ...


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
        self._depth = 0

    # --- the walk ---------------------------------------------------------------------

    def ev(self, value: object, path: str) -> object:
        self._depth += 1
        try:
            if not self.budget.spend(1):
                if self.budget.first_overrun():
                    self.report.problem(
                        path, f"the template takes more than {MAX_STEPS} evaluation steps"
                    )
                return BROKEN
            if self._depth > MAX_DEPTH:
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
            self._depth -= 1

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
        handler = _HANDLERS.get(name)
        if handler is None:
            if name == "yaql":
                self.report.cannot(
                    "function yaql", path, "function 'yaql' is not supported (no yaql engine)"
                )
            elif name == "resource_facade":
                return Unknown("the facade of the parent resource")
            else:
                self.report.cannot(f"function {name}", path, f"function '{name}' is not supported")
            return BROKEN
        return handler(self, args, path)

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

    def truth(self, value: object, path: str) -> bool | None:
        """A condition: a condition name, a boolean, or a condition function."""
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return self.scope.condition(value, path)
        result = self.ev(value, path)
        if isinstance(result, bool):
            return result
        if result != BROKEN:
            self.fail(path, f"a condition must be true or false, found {describe(result)}")
        return None


# --- the functions ----------------------------------------------------------------------

Handler = Callable[[Evaluator, object, str], object]


def _get_param(e: Evaluator, args: object, path: str) -> object:
    keys = args if isinstance(args, list) else [args]
    if not keys or not isinstance(keys[0], str | dict):
        return e.fail(path, f"'get_param' takes a parameter name, found {describe(args)}")
    name = e.ev(keys[0], child(path, 0)) if isinstance(keys[0], dict) else keys[0]
    if not isinstance(name, str):
        return BROKEN if name == BROKEN else e.fail(path, "the parameter name must be text")
    value = e.scope.param(name, path)
    for i, raw in enumerate(keys[1:], start=1):
        key = e.ev(raw, child(path, i))
        if value == BROKEN or isinstance(value, Ref | Attr | Unknown):
            return value
        if isinstance(value, list) and isinstance(key, str) and key.isdigit():
            key = int(key)
        found = step_into(value, key)
        if found is NOWHERE:
            return ""  # Heat: a path that leads nowhere gives empty text
        value = found
    return value


NOWHERE = object()


def step_into(value: object, key: object) -> object:
    """`value[key]` for a mapping or a list, or NOWHERE."""
    if isinstance(value, dict):
        return value.get(key, NOWHERE)
    if isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
        return value[key]
    return NOWHERE


def _select(e: Evaluator, value: object, key: object, path: str) -> object:
    if value == BROKEN or isinstance(value, Ref | Attr | Unknown):
        return value
    if isinstance(value, dict):
        if key not in value:
            return e.fail(path, f"no key {describe(key)} in the value")
        return value[key]
    if isinstance(value, list):
        if isinstance(key, str) and key.isdigit():
            key = int(key)
        if not isinstance(key, int) or not 0 <= key < len(value):
            return e.fail(path, f"{describe(key)} is not an index of a list of {len(value)}")
        return value[key]
    return e.fail(path, f"cannot select {describe(key)} from {describe(value)}")


def _get_resource(e: Evaluator, args: object, path: str) -> object:
    if not isinstance(args, str):
        return e.fail(path, f"'get_resource' takes a resource name, found {describe(args)}")
    if not e.scope.has_resource(args):
        return e.fail(path, f"unknown resource '{args}'")
    return Ref(args, e.scope.name)


def _get_attr(e: Evaluator, args: object, path: str) -> object:
    lo = 1 if e.scope.version.at_least("2015-10-15") else 2
    items = e.args_list("get_attr", args, path, lo, 99)
    if items is None:
        return BROKEN
    name = items[0]
    if not isinstance(name, str):
        return e.fail(child(path, 0), f"the resource name must be text, found {describe(name)}")
    if not e.scope.has_resource(name):
        return e.fail(child(path, 0), f"unknown resource '{name}'")
    rest = tuple(e.ev(v, child(path, i + 1)) for i, v in enumerate(items[1:]))
    return e.scope.attribute(name, rest)


def _string_of(e: Evaluator, value: object, path: str, fn: str) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or value is OMIT:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list) and e.scope.version.at_least("2015-10-15"):
        return json.dumps(value)
    e.fail(path, f"'{fn}' needs text or numbers, found {describe(value)}")
    return None


def replace_all(template: str, params: dict[str, str]) -> str:
    """Heat's str_replace: longest keys first, and replaced text is never scanned again."""
    keys = sorted(params, key=lambda k: (-len(k), k))

    def go(text: str, rest: list[str]) -> str:
        if not rest:
            return text
        key, *more = rest
        return params[key].join(go(part, more) for part in text.split(key))

    return go(template, [k for k in keys if k])


def _str_replace(mode: str) -> Handler:
    def handler(e: Evaluator, args: object, path: str) -> object:
        if not isinstance(args, dict) or set(args) != {"template", "params"}:
            return e.fail(
                path,
                f"'{mode}' takes a mapping with 'template' and 'params', found {describe(args)}",
            )
        template = e.ev(args["template"], child(path, "template"))
        params = e.ev(args["params"], child(path, "params"))
        sym = first_symbolic([template, params])
        if sym is not None:
            return sym if sym == BROKEN else unknown_from(sym, mode)
        if not isinstance(template, str):
            return e.fail(
                child(path, "template"), f"the template must be text, found {describe(template)}"
            )
        if not isinstance(params, dict):
            return e.fail(
                child(path, "params"), f"params must be a mapping, found {describe(params)}"
            )
        texts: dict[str, str] = {}
        for k, v in params.items():
            text = _string_of(e, v, child(path, "params", str(k)), mode)
            if text is None:
                return BROKEN
            texts[str(k)] = text
            if mode != "str_replace" and str(k) not in template:
                return e.fail(
                    child(path, "params", str(k)),
                    f"'{mode}': the param '{k}' is not in the template",
                )
            if mode == "str_replace_vstrict" and text == "":
                return e.fail(child(path, "params", str(k)), f"'{mode}': the param '{k}' is empty")
        return replace_all(template, texts)

    return handler


def _list_join(e: Evaluator, args: object, path: str) -> object:
    multi = e.scope.version.at_least("2015-10-15")
    items = e.args_list("list_join", args, path, 2, 99 if multi else 2)
    if items is None:
        return BROKEN
    delim = e.ev(items[0], child(path, 0))
    lists = [e.ev(v, child(path, i + 1)) for i, v in enumerate(items[1:])]
    sym = first_symbolic([delim, *lists])
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "list_join")
    if not isinstance(delim, str):
        return e.fail(child(path, 0), f"the delimiter must be text, found {describe(delim)}")
    texts: list[str] = []
    for i, lst in enumerate(lists, start=1):
        if not isinstance(lst, list):
            return e.fail(child(path, i), f"'list_join' joins lists, found {describe(lst)}")
        for j, item in enumerate(lst):
            text = _string_of(e, item, child(path, i, j), "list_join")
            if text is None:
                return BROKEN
            texts.append(text)
    return delim.join(texts)


def _fn_join(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("Fn::Join", args, path, 2, 2)
    if values is None:
        return BROKEN
    delim, lst = values
    sym = first_symbolic([delim, lst])
    if sym is not None:
        return unknown_from(sym, "Fn::Join")
    if not isinstance(delim, str) or not isinstance(lst, list):
        return e.fail(path, "'Fn::Join' takes [delimiter, [list of text]]")
    texts = [_string_of(e, v, child(path, 1, i), "Fn::Join") for i, v in enumerate(lst)]
    return BROKEN if None in texts else delim.join(t for t in texts if t is not None)


def _fn_select(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("Fn::Select", args, path, 2, 2)
    if values is None:
        return BROKEN
    key, value = values
    if isinstance(value, list) and isinstance(key, str) and key.isdigit():
        key = int(key)
    return _select(e, value, key, path)


def _if(e: Evaluator, args: object, path: str) -> object:
    hi = 3
    lo = 2 if e.scope.version.if_without_else else 3
    items = e.args_list("if", args, path, lo, hi)
    if items is None:
        return BROKEN
    chosen = e.truth(items[0], child(path, 0))
    if chosen is None:
        return BROKEN
    if chosen:
        return e.ev(items[1], child(path, 1))
    return e.ev(items[2], child(path, 2)) if len(items) == 3 else OMIT


def _equals(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("equals", args, path, 2, 2)
    if values is None:
        return BROKEN
    a, b = values
    sym = first_symbolic([a, b])
    if sym is not None:
        if sym == BROKEN:
            return BROKEN
        return e.fail(path, "'equals' must compare values known before the stack exists")
    return a == b


def _not(e: Evaluator, args: object, path: str) -> object:
    value = e.truth(args, path)
    return BROKEN if value is None else not value


def _and_or(name: str) -> Handler:
    def handler(e: Evaluator, args: object, path: str) -> object:
        items = e.args_list(name, args, path, 2, 99)
        if items is None:
            return BROKEN
        values = [e.truth(v, child(path, i)) for i, v in enumerate(items)]
        if any(v is None for v in values):
            return BROKEN
        return all(values) if name == "and" else any(values)

    return handler


def _contains(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("contains", args, path, 2, 2)
    if values is None:
        return BROKEN
    value, seq = values
    if first_symbolic([value, seq]) is not None:
        return (
            BROKEN
            if first_symbolic([value, seq]) == BROKEN
            else e.fail(path, "'contains' must test values known before the stack exists")
        )
    if not isinstance(seq, list | str | dict):
        return e.fail(child(path, 1), f"'contains' needs a sequence, found {describe(seq)}")
    return value in seq


def _repeat(e: Evaluator, args: object, path: str) -> object:
    if not isinstance(args, dict) or not {"for_each", "template"} <= set(args):
        return e.fail(path, "'repeat' takes a mapping with 'for_each' and 'template'")
    extra = set(args) - {"for_each", "template", "permutations"}
    if extra:
        return e.fail(path, f"'repeat' does not take {', '.join(sorted(map(str, extra)))}")
    for_each = e.ev(args["for_each"], child(path, "for_each"))
    permutations = e.ev(args.get("permutations", True), child(path, "permutations"))
    if first_symbolic(for_each) is not None:
        sym = first_symbolic(for_each)
        return BROKEN if sym == BROKEN else Unknown("a repeat over values known at run time")
    if not isinstance(for_each, dict) or not for_each:
        return e.fail(child(path, "for_each"), "'for_each' must map placeholders to lists")
    keys = [str(k) for k in for_each]
    lists = list(for_each.values())
    for k, lst in zip(keys, lists, strict=True):
        if not isinstance(lst, list):
            return e.fail(
                child(path, "for_each", k), f"'{k}' must be a list, found {describe(lst)}"
            )
    if permutations is False:
        if len({len(v) for v in lists if isinstance(v, list)}) > 1:
            return e.fail(
                child(path, "for_each"), "without permutations the lists must be the same length"
            )
        combos: list[tuple[object, ...]] = list(zip(*lists, strict=True))
    else:
        total = 1
        for lst in lists:
            total *= len(lst) if isinstance(lst, list) else 1
        if total > MAX_ITEMS:
            return e.fail(path, f"'repeat' would make {total} items; the limit is {MAX_ITEMS}")
        combos = list(itertools.product(*lists))
    template = args["template"]
    out: list[object] = []
    for combo in combos:
        params = {k: v for k, v in zip(keys, combo, strict=True)}
        out.append(e.ev(_substitute(template, params), child(path, "template")))
    return out


def _substitute(value: object, params: dict[str, object]) -> object:
    """The template of a `repeat` with its placeholders replaced, in keys and values."""
    if isinstance(value, str):
        for k, v in params.items():
            if value == k:
                return v
        texts = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
        return replace_all(value, texts) if any(k in value for k in texts) else value
    if isinstance(value, dict):
        return {_substitute(k, params): _substitute(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, params) for v in value]
    return value


def _map_merge(e: Evaluator, args: object, path: str) -> object:
    items = e.args_list("map_merge", args, path, 1, 99)
    if items is None:
        return BROKEN
    out: dict[object, object] = {}
    for i, raw in enumerate(items):
        value = e.ev(raw, child(path, i))
        if value == BROKEN or isinstance(value, Ref | Attr | Unknown):
            return value if value == BROKEN else unknown_from(value, "map_merge")
        if value is None or value is OMIT:
            continue
        if not isinstance(value, dict):
            return e.fail(child(path, i), f"'map_merge' merges mappings, found {describe(value)}")
        out.update(value)
    return out


def _map_replace(e: Evaluator, args: object, path: str) -> object:
    evaluated = e.evaluated("map_replace", args, path, 2, 2)
    if evaluated is None:
        return BROKEN
    value, spec = evaluated
    if not isinstance(value, dict):
        return value if value == BROKEN else e.fail(child(path, 0), "'map_replace' needs a mapping")
    if not isinstance(spec, dict) or not set(spec) <= {"keys", "values"}:
        return e.fail(child(path, 1), "the second argument takes 'keys' and/or 'values' mappings")
    keys = spec.get("keys") or {}
    values = spec.get("values") or {}
    if not isinstance(keys, dict) or not isinstance(values, dict):
        return e.fail(child(path, 1), "'keys' and 'values' must be mappings")
    out: dict[object, object] = {}
    for k, v in value.items():
        new_key = keys.get(k, k)
        if new_key in out:
            return e.fail(child(path, 1, "keys"), f"replacing keys makes '{new_key}' twice")
        out[new_key] = values.get(v, v) if isinstance(v, str | int | float | bool) else v
    return out


def _digest(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("digest", args, path, 2, 2)
    if values is None:
        return BROKEN
    algo, value = values
    sym = first_symbolic([algo, value])
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "digest")
    if not isinstance(algo, str) or algo not in hashlib.algorithms_available:
        return e.fail(child(path, 0), f"unknown digest algorithm {describe(algo)}")
    if not isinstance(value, str):
        return e.fail(child(path, 1), f"'digest' needs text, found {describe(value)}")
    return hashlib.new(algo, value.encode()).hexdigest()


def _str_split(e: Evaluator, args: object, path: str) -> object:
    parts = e.evaluated("str_split", args, path, 2, 3)
    if parts is None:
        return BROKEN
    sym = first_symbolic(parts)
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "str_split")
    delim, text = parts[0], parts[1]
    if not isinstance(delim, str) or not delim or not isinstance(text, str):
        return e.fail(path, "'str_split' takes [delimiter, text, optional index]")
    pieces: list[object] = list(text.split(delim))
    if len(parts) == 3:
        return _select(e, pieces, parts[2], child(path, 2))
    return pieces


def _list_concat(unique: bool) -> Handler:
    name = "list_concat_unique" if unique else "list_concat"

    def handler(e: Evaluator, args: object, path: str) -> object:
        items = e.args_list(name, args, path, 1, 99)
        if items is None:
            return BROKEN
        out: list[object] = []
        for i, raw in enumerate(items):
            value = e.ev(raw, child(path, i))
            if value == BROKEN or isinstance(value, Ref | Attr | Unknown):
                return value if value == BROKEN else unknown_from(value, name)
            if value is None or value is OMIT:
                continue
            if not isinstance(value, list):
                return e.fail(child(path, i), f"'{name}' joins lists, found {describe(value)}")
            out.extend(value)
        if unique:
            seen: list[object] = []
            for v in out:
                if v not in seen:
                    seen.append(v)
            out = seen
        return out

    return handler


def _filter(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("filter", args, path, 2, 2)
    if values is None:
        return BROKEN
    drop, value = values
    if not isinstance(drop, list) or not isinstance(value, list):
        if BROKEN in (drop, value):
            return BROKEN
        return e.fail(path, "'filter' takes [values to remove, list]")
    return [v for v in value if v not in drop]


_URL_KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")


def _make_url(e: Evaluator, args: object, path: str) -> object:
    value = e.ev(args, path)
    if not isinstance(value, dict):
        return value if value == BROKEN else e.fail(path, "'make_url' takes a mapping")
    bad = [str(k) for k in value if k not in _URL_KEYS]
    if bad:
        return e.fail(path, f"'make_url' does not take {', '.join(bad)}")
    sym = first_symbolic(value)
    if sym is not None:
        return unknown_from(sym, "make_url")
    if "host" not in value:
        return e.fail(path, "'make_url' needs a host")
    host = str(value["host"])
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    user = ""
    if value.get("username"):
        user = urlquote(str(value["username"]), safe="")
        if value.get("password"):
            user += ":" + urlquote(str(value["password"]), safe="")
        user += "@"
    port = f":{value['port']}" if value.get("port") not in (None, "") else ""
    url = f"{value.get('scheme') or 'http'}://{user}{host}{port}"
    url += "/" + urlquote(str(value.get("path") or "").lstrip("/"), safe="/")
    query = value.get("query")
    if isinstance(query, dict) and query:
        url += "?" + "&".join(
            f"{urlquote(str(k), safe='')}={urlquote(str(v), safe='')}" for k, v in query.items()
        )
    if value.get("fragment"):
        url += "#" + urlquote(str(value["fragment"]), safe="")
    return url


def _get_file(e: Evaluator, args: object, path: str) -> object:
    if not isinstance(args, str):
        return e.fail(path, f"'get_file' takes a file name, found {describe(args)}")
    text = e.scope.file(args)
    if text is None:
        return e.fail(path, f"the file '{args}' was not given (add it to 'files')")
    return text


def _fn_unsupported(e: Evaluator, args: object, path: str) -> object:
    name = path.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    e.report.cannot(f"function {name}", path, f"function '{name}' is not supported")
    return BROKEN


_HANDLERS: dict[str, Handler] = {
    "get_param": _get_param,
    "get_resource": _get_resource,
    "get_attr": _get_attr,
    "str_replace": _str_replace("str_replace"),
    "str_replace_strict": _str_replace("str_replace_strict"),
    "str_replace_vstrict": _str_replace("str_replace_vstrict"),
    "list_join": _list_join,
    "Fn::Join": _fn_join,
    "Fn::Select": _fn_select,
    "Fn::Split": _fn_unsupported,
    "Fn::Replace": _fn_unsupported,
    "Fn::Base64": _fn_unsupported,
    "Ref": _fn_unsupported,
    "if": _if,
    "equals": _equals,
    "not": _not,
    "and": _and_or("and"),
    "or": _and_or("or"),
    "contains": _contains,
    "repeat": _repeat,
    "map_merge": _map_merge,
    "map_replace": _map_replace,
    "digest": _digest,
    "str_split": _str_split,
    "list_concat": _list_concat(False),
    "list_concat_unique": _list_concat(True),
    "filter": _filter,
    "make_url": _make_url,
    "get_file": _get_file,
}

SUPPORTED = frozenset(_HANDLERS) - {"Fn::Split", "Fn::Replace", "Fn::Base64", "Ref"}

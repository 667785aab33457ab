"""Functions over lists and mappings: repeat, map_merge, map_replace, list_concat(_unique),
filter.

`repeat` makes every combination of its `for_each` lists (or zips them without
permutations), bounded by MAX_ITEMS; None and an omitted `if` count as nothing to merge.
"""

from __future__ import annotations

import itertools
import json

from shoal.documents.collect import child
from shoal.documents.hot.evaluator import BROKEN, MAX_ITEMS, Evaluator, Handler
from shoal.documents.hot.values import OMIT, Attr, Ref, Unknown, first_symbolic, unknown_from
from shoal.documents.tree import describe
from shoal.model.textreplace import OverBudget, replace_all


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
    # From 2016-10-14 a mapping repeats over its keys (Heat's RepeatWithMap); null is none.
    maps = e.scope.version.has_conditions
    lists = [
        [] if v is None else [str(x) for x in v] if isinstance(v, dict) and maps else v
        for v in for_each.values()
    ]
    for k, lst in zip(keys, lists, strict=True):
        if not isinstance(lst, list):
            kinds = "a list or a mapping" if maps else "a list"
            return e.fail(
                child(path, "for_each", k), f"'{k}' must be {kinds}, found {describe(lst)}"
            )
        for i, item in enumerate(lst):
            # Heat calls str.replace(placeholder, item) on every text of the template.
            if (
                not isinstance(item, str)
                and first_symbolic(item) is None
                and _has_text(args["template"])
            ):
                return e.fail(
                    child(path, "for_each", k, i),
                    f"'repeat' replaces '{k}' in text, found {describe(item)}",
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
        try:
            item = _substitute(template, params)
        except OverBudget as over:
            return e.fail(child(path, "template"), f"'repeat': {over.reason}")
        size = e.budget.sizes.of(item)
        if not e.will_make(size.chars, path, "repeat", size.items):
            return BROKEN
        out.append(e.ev(item, child(path, "template")))
    return out


def _has_text(template: object) -> bool:
    """True if `template` holds some text (a key or a value)."""
    if isinstance(template, str):
        return True
    if isinstance(template, list):
        return any(_has_text(t) for t in template)
    if isinstance(template, dict):
        return any(_has_text(k) or _has_text(v) for k, v in template.items())
    return False


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
        if not e.will_make(0, path, "map_merge", len(value)):
            return BROKEN
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
            if not e.will_make(0, path, name, len(value)):
                return BROKEN
            out.extend(value)
        if unique:
            # Quadratic in the list's length: charged as such before it is done.
            if not e.budget.spend(len(out) * len(out) // 64):
                return e.fail(path, f"'{name}' of {len(out)} items takes too many steps")
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
    if not e.budget.spend(len(value) * (1 + len(drop) // 64)):
        return e.fail(path, f"'filter' of {len(drop)} values over {len(value)} takes too many steps")
    return [v for v in value if v not in drop]


FUNCTIONS: dict[str, Handler] = {
    "repeat": _repeat,
    "map_merge": _map_merge,
    "map_replace": _map_replace,
    "list_concat": _list_concat(False),
    "list_concat_unique": _list_concat(True),
    "filter": _filter,
}

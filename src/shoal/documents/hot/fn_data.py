"""Functions over lists and mappings: repeat, map_merge, map_replace, list_concat(_unique),
filter.

`repeat` makes every combination of its `for_each` lists (or zips them without
permutations), bounded by MAX_ITEMS; None and an omitted `if` count as nothing to merge.
"""

from __future__ import annotations

import itertools

from shoal.documents.collect import child
from shoal.documents.hot.evaluator import BROKEN, MAX_ITEMS, Evaluator, Handler, call_of
from shoal.documents.hot.values import OMIT, Attr, Ref, Unknown, first_symbolic, unknown_from
from shoal.documents.tree import describe


def _repeat(e: Evaluator, args: object, path: str) -> object:
    """Heat's Repeat (RepeatWithMap from 2016-10-14, RepeatWithNestedLoop from 2017-09-01):
    the template is evaluated first, then each combination's items replace the placeholders,
    one placeholder after the other in `for_each`'s order, in every text of it (keys too)."""
    if not isinstance(args, dict) or not {"for_each", "template"} <= set(args):
        return e.fail(path, "'repeat' takes a mapping with 'for_each' and 'template'")
    version = e.scope.version
    nested = True
    if version.at_least("2017-09-01"):  # before, Heat ignores `permutations` (and other keys)
        nested = args.get("permutations", True)
        if not isinstance(nested, bool):
            return e.fail(
                child(path, "permutations"), "'permutations' must be true or false, as written"
            )
    if not isinstance(args["for_each"], dict) and call_of(args["for_each"]) is None:
        return e.fail(child(path, "for_each"), "'for_each' must map placeholders to lists")
    for_each = e.ev(args["for_each"], child(path, "for_each"))
    sym = first_symbolic(for_each)
    if sym is not None:
        return BROKEN if sym == BROKEN else Unknown("a repeat over values known at run time")
    if not isinstance(for_each, dict) or not for_each:
        return e.fail(child(path, "for_each"), "'for_each' must map placeholders to lists")
    lists = _for_each_lists(e, for_each, version.has_conditions and nested, path)
    if lists is None:
        return BROKEN
    if not nested and len({len(v) for v, given in lists if given}) > 1:
        return e.fail(
            child(path, "for_each"), "without permutations the lists must be the same length"
        )
    values = [v for v, _ in lists]
    total = 1
    for lst in values:
        total *= len(lst)
    total = min(map(len, values)) if not nested else total
    if total > MAX_ITEMS:
        return e.fail(path, f"'repeat' would make {total} items; the limit is {MAX_ITEMS}")
    template = e.ev(args["template"], child(path, "template"))
    if template == BROKEN:
        return BROKEN
    keys = list(for_each)
    combos = itertools.product(*values) if nested else zip(*values, strict=False)
    size = e.budget.sizes.of(template)
    out: list[object] = []
    for combo in combos:
        # charged before it is made: each item is the template written out again (what its
        # texts grow by is charged as they grow, in _replaced_in)
        if not e.will_make(size.chars, path, "repeat", size.items):
            return BROKEN
        try:
            item = _replaced_in(template, keys, combo, _Room(max(e.budget.chars, 0)), {})
        except _NotText as bad:
            return e.fail(child(path, "for_each"), f"'repeat': {bad}")
        except _TooLong as long:
            e.will_make(long.chars, path, "repeat")  # over what is left: the one problem
            return BROKEN
        out.append(item)
    return out


def _for_each_lists(
    e: Evaluator, for_each: dict[object, object], maps: bool, path: str
) -> list[tuple[list[object], bool]] | None:
    """Each placeholder's items (a mapping's keys where `maps`), and whether it was given
    (null is no items, and not counted when the lengths must agree)."""
    out: list[tuple[list[object], bool]] = []
    for k, v in for_each.items():
        if v is None:
            out.append(([], False))
        elif isinstance(v, list):
            out.append((v, True))
        elif isinstance(v, dict) and maps:
            out.append((list(v), True))
        else:
            kinds = "lists or mappings" if maps else "lists"
            e.fail(
                child(path, "for_each", str(k)),
                f"the values of 'for_each' must be {kinds}, found {describe(v)}",
            )
            return None
    return out


class _NotText(Exception):
    """A placeholder or its item that is not text, met in a text (Heat's str.replace)."""


class _TooLong(Exception):
    """A text the replacement would make longer than the characters left to make."""

    def __init__(self, chars: int) -> None:
        super().__init__(chars)
        self.chars = chars


class _Room:
    """The characters a repeat's item may still grow by (what is left of the budget)."""

    def __init__(self, left: int) -> None:
        self.left = left


def _replaced_in(
    value: object,
    keys: list[object],
    items: tuple[object, ...],
    room: _Room,
    done: dict[int, object],
) -> object:
    """`value` with each key replaced by its item in every text, keys in order (Heat's
    `_do_replacement`). A part shared in `value` is replaced once (`done`, by identity) and a
    part with nothing to replace is kept as it is, so the work is what `value` holds, not what
    it expands to; growing past `room` is _TooLong."""
    if isinstance(value, str):
        return _replaced_text(value, keys, items, room)
    if not isinstance(value, list | dict):
        return value
    if id(value) in done:
        return done[id(value)]
    out: object
    if isinstance(value, list):
        new = [_replaced_in(v, keys, items, room, done) for v in value]
        out = value if all(a is b for a, b in zip(new, value, strict=True)) else new
    else:
        pairs = [
            (_replaced_in(k, keys, items, room, done), _replaced_in(v, keys, items, room, done))
            for k, v in value.items()
        ]
        same = all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items(), strict=True))
        out = value if same else dict(pairs)
    done[id(value)] = out
    return out


def _replaced_text(text: str, keys: list[object], items: tuple[object, ...], room: _Room) -> str:
    for key, item in zip(keys, items, strict=True):
        if not isinstance(key, str) or not isinstance(item, str):
            wrong = item if isinstance(key, str) else key
            raise _NotText(
                f"'{key}' is replaced in text, so it and its items must be text; "
                f"found {describe(wrong)}"
            )
        if key and key in text:
            grows = text.count(key) * (len(item) - len(key))
            room.left -= max(grows, 0)
            if room.left < 0:
                raise _TooLong(len(text) + grows)
            text = text.replace(key, item)
    return text


def _sequence_args(e: Evaluator, name: str, args: object, path: str) -> list[object] | None:
    """A function's list of arguments, not yet evaluated (each is, in turn, by the function,
    which stops at the first one known only at run time). Heat resolves them and needs a
    sequence: an empty text is an empty sequence, other text a sequence of characters."""
    if call_of(args) is not None:
        args = e.ev(args, path)
        if args == BROKEN:
            return None
    if args == "":
        return []
    if isinstance(args, str):
        return list(args)
    if not isinstance(args, list):
        e.fail(path, f"'{name}' takes a list, found {describe(args)}")
        return None
    return args


def _map_merge(e: Evaluator, args: object, path: str) -> object:
    items = _sequence_args(e, "map_merge", args, path)
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
    """Heat's MapReplace: a key replaced by one the input has (other than itself), or by one
    already made, is refused; a key replaced by null keeps its name."""
    evaluated = e.evaluated("map_replace", args, path, 2, 2)
    if evaluated is None:
        return BROKEN
    value, spec = (v if v is not None else {} for v in evaluated)
    sym = first_symbolic([value, spec])
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "map_replace")
    if not isinstance(value, dict):
        return e.fail(child(path, 0), f"'map_replace' needs a mapping, found {describe(value)}")
    if not isinstance(spec, dict) or not set(spec) <= {"keys", "values"}:
        return e.fail(child(path, 1), "the second argument takes 'keys' and/or 'values' mappings")
    keys = spec.get("keys") if spec.get("keys") is not None else {}
    values = spec.get("values") if spec.get("values") is not None else {}
    if not isinstance(keys, dict) or not isinstance(values, dict):
        return e.fail(child(path, 1), "'keys' and 'values' must be mappings")
    out: dict[object, object] = {}
    for k, v in value.items():
        new_key = keys.get(k)
        if new_key is None:
            new_key = k
        elif new_key in value and new_key != k:
            return e.fail(
                child(path, 1, "keys", str(k)),
                f"key replacement {new_key} collides with a key in the input map",
            )
        elif new_key in out:
            return e.fail(
                child(path, 1, "keys", str(k)),
                f"key replacement {new_key} collides with a key in the output map",
            )
        try:
            out[new_key] = values.get(v, v)
        except TypeError:  # a list or a mapping is not a key: kept as it is
            out[new_key] = v
    return out


def _list_concat(unique: bool) -> Handler:
    name = "list_concat_unique" if unique else "list_concat"

    def handler(e: Evaluator, args: object, path: str) -> object:
        items = _sequence_args(e, name, args, path)
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
    """Heat's Filter: an empty (or null) list is given back as it is; no values to remove
    (null, empty, false, 0) leaves the list as it is."""
    values = e.evaluated("filter", args, path, 2, 2)
    if values is None:
        return BROKEN
    drop, value = values
    sym = first_symbolic([drop, value])
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "filter")
    if not value:
        return value
    if not isinstance(value, list):
        return e.fail(child(path, 1), f"'filter' works on lists, found {describe(value)}")
    if not drop:
        return value
    if not isinstance(drop, list):
        return e.fail(child(path, 0), f"'filter' removes a list of values, found {describe(drop)}")
    if not e.budget.spend(len(value) * (1 + len(drop) // 64)):
        return e.fail(
            path, f"'filter' of {len(drop)} values over {len(value)} takes too many steps"
        )
    return [v for v in value if v not in drop]


FUNCTIONS: dict[str, Handler] = {
    "repeat": _repeat,
    "map_merge": _map_merge,
    "map_replace": _map_replace,
    "list_concat": _list_concat(False),
    "list_concat_unique": _list_concat(True),
    "filter": _filter,
}

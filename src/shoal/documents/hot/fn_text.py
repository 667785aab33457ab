"""Functions that make text: str_replace (and its strict forms), list_join, Fn::Join, digest,
str_split, make_url.

Heat's str_replace replaces the longest keys first and never scans replaced text again; from
2015-10-15 lists and mappings are joined or replaced as JSON.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote as urlquote
from urllib.parse import urlencode, urlunsplit

from shoal.documents.collect import child
from shoal.documents.hot.evaluator import BROKEN, Evaluator, Handler, call_of
from shoal.documents.hot.fn_lookup import is_index_text
from shoal.documents.hot.values import OMIT, first_symbolic, unknown_from
from shoal.documents.tree import describe
from shoal.model.textreplace import SCAN_CHARS_PER_STEP, OverBudget, replace_all, replaced

__all__ = ["FUNCTIONS", "replace_all"]


def _string_of(e: Evaluator, value: object, path: str, fn: str) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or value is OMIT:
        return ""
    if isinstance(value, bool | int | float):
        return str(value)  # Heat's str(): True, not true
    if isinstance(value, dict | list) and e.scope.version.at_least("2015-10-15"):
        return json.dumps(value, sort_keys=True)  # as Heat's jsonutils.dumps(sort_keys=True)
    e.fail(path, f"'{fn}' needs text or numbers, found {describe(value)}")
    return None


def _str_replace(mode: str) -> Handler:
    def handler(e: Evaluator, args: object, path: str) -> object:
        # Heat reads `template` and `params` and ignores any other key
        if not isinstance(args, dict) or not {"template", "params"} <= set(args):
            return e.fail(
                path,
                f"'{mode}' takes a mapping with 'template' and 'params', found {describe(args)}",
            )
        template = e.ev(args["template"], child(path, "template"))
        raw = args["params"]
        if isinstance(template, str) and isinstance(raw, dict):
            # Each key scans the template once: refused before the params are even read.
            scan = len(raw) * (1 + len(template) // SCAN_CHARS_PER_STEP)
            if scan > max(e.budget.steps, 0):
                return e.fail(
                    path,
                    f"'{mode}': replacing {len(raw)} keys in {len(template)} characters takes "
                    f"more than {max(e.budget.steps, 0)} steps; use fewer keys or a shorter "
                    "template",
                )
        params = e.ev(raw, child(path, "params"))
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
        texts = _replacements(e, mode, params, path)
        if texts is None:
            return BROKEN
        found: set[str] = set()
        try:
            text, work = replaced(template, texts, max_work=max(e.budget.steps, 0), found=found)
        except OverBudget as over:
            return e.fail(path, f"'{mode}': {over.reason}")
        missing = sorted(sorted(set(texts) - found), key=len, reverse=True)
        if mode != "str_replace" and missing:
            # Heat's message; a key inside a longer key's match is not found either
            return e.fail(
                child(path, "params"),
                f"'{mode}': the following params were not found in the template: "
                + ",".join(missing),
            )
        e.budget.spend(work)
        return e.produced(text, path, mode)

    return handler


def _replacements(
    e: Evaluator, mode: str, params: dict[object, object], path: str
) -> dict[str, str] | None:
    """The params as the texts Heat puts in (its `_validate_replacement`), or None (a
    problem): keys are non-empty text; vstrict refuses a null or empty value."""
    texts: dict[str, str] = {}
    for k, v in params.items():
        at = child(path, "params", str(k))
        if not isinstance(k, str):
            e.fail(at, f"'{mode}': a param's name must be text, found {describe(k)}")
            return None
        if not k:
            e.fail(at, f"'{mode}': a param's name must not be empty (Heat: empty separator)")
            return None
        empty = v is None or v is OMIT or (isinstance(v, str | list | dict) and not v)
        if mode == "str_replace_vstrict" and empty:
            e.fail(at, f"'{mode}': the param '{k}' has an undefined or empty value")
            return None
        text = _string_of(e, v, at, mode)
        if text is None:
            return None
        texts[k] = text
    return texts


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
    texts: list[str] = []
    for i, lst in enumerate(lists, start=1):
        if lst is None or lst is OMIT or (multi and not lst):
            continue  # Heat: null is no list; from 2015-10-15 any empty value is skipped
        if not isinstance(lst, list):
            return e.fail(child(path, i), f"'list_join' joins lists, found {describe(lst)}")
        for j, item in enumerate(lst):
            kinds = str | dict | list if multi else str
            if item is not None and not isinstance(item, kinds):
                joins = "text, mappings and lists" if multi else "text"
                return e.fail(
                    child(path, i, j), f"'list_join' joins {joins}, found {describe(item)}"
                )
            text = _string_of(e, item, child(path, i, j), "list_join")
            if text is None:
                return BROKEN
            texts.append(text)
    if not isinstance(delim, str):
        return e.fail(child(path, 0), f"the delimiter must be text, found {describe(delim)}")
    if not e.will_make(sum(map(len, texts)) + len(delim) * len(texts), path, "list_join"):
        return BROKEN
    return delim.join(texts)


def _fn_join(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("Fn::Join", args, path, 2, 2)
    if values is None:
        return BROKEN
    delim, lst = values
    sym = first_symbolic([delim, lst])
    if sym is not None:
        return unknown_from(sym, "Fn::Join")
    lst = [] if lst is None else lst
    if not isinstance(delim, str) or not isinstance(lst, list):
        return e.fail(path, "'Fn::Join' takes [delimiter, [list of text]]")
    for i, item in enumerate(lst):
        if item is not None and not isinstance(item, str):  # Heat: items must be strings
            return e.fail(child(path, 1, i), f"'Fn::Join' joins text, found {describe(item)}")
    texts = [_string_of(e, v, child(path, 1, i), "Fn::Join") for i, v in enumerate(lst)]
    size = sum(len(t) for t in texts if t is not None) + len(delim) * len(texts)
    if None in texts or not e.will_make(size, path, "Fn::Join"):
        return BROKEN
    return delim.join(t for t in texts if t is not None)


DIGESTS = frozenset(a for a in hashlib.algorithms_available if not a.startswith("shake"))
"""Heat's digest takes any name hashlib has (as written or in lower case); a `shake_*` needs
a length Heat never gives."""


def _digest(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("digest", args, path, 2, 2)
    if values is None:
        return BROKEN
    algo, value = values
    sym = first_symbolic([algo, value])
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "digest")
    if not isinstance(algo, str) or algo.lower() not in DIGESTS:
        return e.fail(
            child(path, 0),
            f"unknown digest algorithm {describe(algo)}; one of {', '.join(sorted(DIGESTS))}",
        )
    if not isinstance(value, str):
        return e.fail(child(path, 1), f"'digest' needs text, found {describe(value)}")
    try:
        data = value.encode("latin-1")  # as Heat encodes it
        return hashlib.new(algo, data).hexdigest()
    except UnicodeEncodeError:
        return e.fail(child(path, 1), "'digest' hashes text of Latin-1 characters only (as Heat)")
    except ValueError:
        return e.fail(child(path, 0), f"unknown digest algorithm {describe(algo)}")


def _str_split(e: Evaluator, args: object, path: str) -> object:
    if not isinstance(args, list) and call_of(args) is None:
        return e.fail(path, "'str_split' takes [delimiter, text, optional index]")
    parts = e.ev(args, path)
    if parts == BROKEN:
        return BROKEN
    sym = first_symbolic(parts)
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "str_split")
    if not isinstance(parts, list) or len(parts) < 2:
        return e.fail(path, "'str_split' takes [delimiter, text, optional index]")
    delim, text = parts[0], parts[1]
    if text is None:
        return None  # Heat: nothing to split is nothing
    if not isinstance(delim, str) or not delim or not isinstance(text, str):
        return e.fail(path, "'str_split' takes [delimiter, text, optional index]")
    # counted before the list is made: a 1 MB text of commas is a million items
    if not e.will_make(0, path, "str_split", text.count(delim) + 1):
        return BROKEN
    pieces = text.split(delim)
    if len(parts) == 2:  # Heat ignores what follows the index
        return pieces
    index = _whole(parts[2])
    if index is None or not -len(pieces) <= index < len(pieces):
        return e.fail(
            child(path, 2),
            f"{describe(parts[2])} is not an index of the {len(pieces)} parts of the text",
        )
    return pieces[index]


def _whole(value: object) -> int | None:
    """Heat's int() of an index: a number (truncated), a boolean, or text of a whole number."""
    if isinstance(value, int | float) and not (isinstance(value, float) and value != value):
        return int(value) if abs(value) < 1 << 31 else None
    if isinstance(value, str) and is_index_text(value.strip().removeprefix("-")):
        return int(value)
    return None


_URL_KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")
_URL_ORDER = _URL_KEYS


def _make_url(e: Evaluator, args: object, path: str) -> object:
    """Heat's MakeURL, step for step (urlunsplit of quoted parts; no default scheme or path)."""
    value = e.ev(args, path)
    if not isinstance(value, dict):
        return value if value == BROKEN else e.fail(path, "'make_url' takes a mapping")
    bad = [str(k) for k in value if k not in _URL_KEYS]
    if bad:
        return e.fail(path, f"'make_url' does not take {', '.join(bad)}")
    sym = first_symbolic(value)
    if sym is not None:
        return unknown_from(sym, "make_url")
    for key in _URL_ORDER:  # Heat checks in this order and stops at `query`
        if key not in value:
            continue
        arg = value[key]
        if key == "query":
            if not isinstance(arg, dict):
                return e.fail(child(path, key), "'make_url': 'query' must be a mapping")
            break
        if key == "port":
            port = arg
            if not isinstance(port, int):  # a boolean too, as in Heat
                try:
                    port = int(str(port))
                except ValueError:
                    return e.fail(child(path, key), f"invalid URL port {describe(arg)}")
            if not 0 < port <= 65535:
                return e.fail(child(path, key), f"invalid URL port {port}, not in 1-65535")
        elif not isinstance(arg, str):
            return e.fail(child(path, key), f"'make_url': '{key}' must be text")
    scheme = str(value.get("scheme", ""))
    if ":" in scheme:
        return e.fail(child(path, "scheme"), "the URL scheme must not contain ':'")
    user = urlquote(str(value.get("username", "")), safe="")
    password = urlquote(str(value.get("password", "")), safe="")
    netloc = ""
    if user or password:
        netloc = user + (":" + password if password else "") + "@"
    host = str(value.get("host", ""))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = urlquote(host, safe=":")
    netloc += f"[{host}]" if ":" in host else host
    if value.get("port"):
        netloc += f":{value['port']}"
    query = value.get("query") or {}
    url = urlunsplit(
        (
            scheme,
            netloc,
            urlquote(str(value.get("path", ""))),
            urlencode(query if isinstance(query, dict) else {}).replace("%2F", "/"),
            urlquote(str(value.get("fragment", ""))),
        )
    )
    return url


FUNCTIONS: dict[str, Handler] = {
    "str_replace": _str_replace("str_replace"),
    "str_replace_strict": _str_replace("str_replace_strict"),
    "str_replace_vstrict": _str_replace("str_replace_vstrict"),
    "list_join": _list_join,
    "Fn::Join": _fn_join,
    "digest": _digest,
    "str_split": _str_split,
    "make_url": _make_url,
}

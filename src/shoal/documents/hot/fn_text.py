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
from shoal.documents.hot.evaluator import BROKEN, Evaluator, Handler
from shoal.documents.hot.fn_lookup import select
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
        if not isinstance(args, dict) or set(args) != {"template", "params"}:
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
        try:
            text, work = replaced(template, texts, max_work=max(e.budget.steps, 0))
        except OverBudget as over:
            return e.fail(path, f"'{mode}': {over.reason}")
        e.budget.spend(work)
        return e.produced(text, path, mode)

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
            if item is not None and not isinstance(item, str | dict | list):
                return e.fail(
                    child(path, i, j),
                    f"'list_join' joins text, mappings and lists, found {describe(item)}",
                )
            text = _string_of(e, item, child(path, i, j), "list_join")
            if text is None:
                return BROKEN
            texts.append(text)
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
    if not isinstance(delim, str) or not isinstance(lst, list):
        return e.fail(path, "'Fn::Join' takes [delimiter, [list of text]]")
    texts = [_string_of(e, v, child(path, 1, i), "Fn::Join") for i, v in enumerate(lst)]
    size = sum(len(t) for t in texts if t is not None) + len(delim) * len(texts)
    if None in texts or not e.will_make(size, path, "Fn::Join"):
        return BROKEN
    return delim.join(t for t in texts if t is not None)


DIGESTS = frozenset(a for a in hashlib.algorithms_guaranteed if not a.startswith("shake"))
"""Heat's digest takes a name for hashlib; a `shake_*` needs a length Heat never gives."""


def _digest(e: Evaluator, args: object, path: str) -> object:
    values = e.evaluated("digest", args, path, 2, 2)
    if values is None:
        return BROKEN
    algo, value = values
    sym = first_symbolic([algo, value])
    if sym is not None:
        return sym if sym == BROKEN else unknown_from(sym, "digest")
    if not isinstance(algo, str) or algo not in DIGESTS:
        return e.fail(
            child(path, 0),
            f"unknown digest algorithm {describe(algo)}; one of {', '.join(sorted(DIGESTS))}",
        )
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
    # counted before the list is made: a 1 MB text of commas is a million items
    if not e.will_make(0, path, "str_split", text.count(delim) + 1):
        return BROKEN
    pieces: list[object] = list(text.split(delim))
    if len(parts) == 3:
        return select(e, pieces, parts[2], child(path, 2))
    return pieces


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
            if not isinstance(port, int) or isinstance(port, bool):
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

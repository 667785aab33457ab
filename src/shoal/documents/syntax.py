"""Text to a parsed tree (JSON or YAML), and syntax errors as one clear sentence.

Mappings come back as `Pairs`, so a repeated key is never silently dropped. Text that starts
with `{` or `[` is read as JSON (unless its source is a .yaml/.yml file): a JSON document is what
a user who writes braces meant, and JSON's errors have exact positions; YAML would quietly read
a bare `x` as the text "x". Everything else is YAML. Non-breaking spaces in indentation, as left
by copying from a web page, count as spaces. A syntax error is reported as one problem with
path "", naming the line and column, what was expected, and quoting the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import yaml

from shoal.documents.tree import Pairs
from shoal.model.problems import InvalidDocument, Problem

DEFAULT_SOURCE = "<document>"


def parse(text: str | bytes, source: str = DEFAULT_SOURCE) -> object:
    """The parsed document, or InvalidDocument with one problem saying why it cannot be read."""
    where = "" if source == DEFAULT_SOURCE else f"{source}: "
    decoded = _plain_indentation(_decode(text, where))
    if not decoded.strip():
        raise _fail(f"{where}the document is empty")
    if decoded.lstrip()[:1] in ("{", "[") and not source.endswith((".yaml", ".yml")):
        try:
            return _within_depth(json.loads(decoded, object_pairs_hook=Pairs), decoded, where)
        except json.JSONDecodeError as err:
            raise _fail(where + _json_message(decoded, err)) from None
        except RecursionError:
            raise _fail(f"{where}the document is nested too deeply to read") from None
        except ValueError as err:  # e.g. an integer with thousands of digits
            raise _fail(f"{where}the document cannot be read: {err}") from None
    try:
        return _yaml_load(decoded)
    except yaml.MarkedYAMLError as err:
        raise _fail(where + _yaml_message(decoded, err)) from None
    except yaml.reader.ReaderError as err:
        raise _fail(
            f"{where}the document holds a character that is not allowed in text "
            f"({_code_point(err.character)} at offset {err.position})"
        ) from None
    except yaml.YAMLError as err:
        raise _fail(f"{where}the document is not valid YAML: {err}") from None
    except RecursionError:
        raise _fail(f"{where}the document is nested too deeply to read") from None
    except (ValueError, TypeError) as err:
        raise _fail(f"{where}the document cannot be read: {err}") from None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def _within_depth(tree: object, text: str, where: str) -> object:
    """`tree`, or a refusal when the JSON text nests deeper than MAX_DEPTH (its brackets
    counted outside strings: a scan of the text, not a walk of every value)."""
    depth = 0
    for bracket in _BRACKET.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            raise _fail(
                f"{where}the document is nested too deeply to read (more than {MAX_DEPTH} levels)"
            )
    return tree


def _code_point(character: object) -> str:
    if isinstance(character, int):
        return f"U+{character:04X}"
    if isinstance(character, str) and len(character) == 1:
        return f"U+{ord(character):04X}"
    return repr(character)


def _fail(message: str) -> InvalidDocument:
    return InvalidDocument([Problem("", message)])


def _decode(text: str | bytes, where: str) -> str:
    if isinstance(text, str):
        return text.removeprefix("\ufeff")
    try:
        return text.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _fail(
            f"{where}the document is not UTF-8 text (byte 0x{text[err.start]:02x} at offset "
            f"{err.start}); save it as UTF-8"
        ) from None


_INDENT = re.compile(r"(?m)^[ \t\u00a0]+")


def _plain_indentation(text: str) -> str:
    """Non-breaking spaces in indentation (text copied from a web page) become plain spaces.

    The seed's commenter form is indented this way; neither JSON nor YAML counts U+00A0 as
    white space. Only leading indentation is touched, so values never change.
    """
    if "\u00a0" not in text:
        return text
    return _INDENT.sub(lambda m: m.group(0).replace("\u00a0", " "), text)


# --- YAML -----------------------------------------------------------------------------------


MAX_NODES = 200_000
"""YAML nodes a document may stand for, aliases counted as what they expand to (a billion
laughs in 700 bytes is refused while it is composed, before an object is built). A scalar
counts one more for every CHARS_PER_NODE characters, so a long text aliased many times counts
as long as its copies."""
CHARS_PER_NODE = 64
MAX_DEPTH = 100
"""Levels of nesting of any parsed document, YAML or JSON (no reader walks deeper)."""


class BoundedLoader(yaml.SafeLoader):
    """The safe loader with its composing metered (see below); plain dicts for mappings.

    Composing is metered: every node counts once, an alias as many nodes as its anchor stands
    for; an alias inside its own anchor (a recursive document) is refused, as is nesting deeper
    than MAX_DEPTH.
    """

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._depth = 0
        self._weights: dict[str, int] = {}
        self._open: set[str] = set()

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor: str | None = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) and anchor is not None:
            if anchor in self._open:
                raise _composer_error(f"the alias *{anchor} is inside its own anchor", event)
            node = super().compose_node(parent, index)
            self._count(self._weights.get(anchor, 1), event)
            return node
        nests = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        self._depth += nests
        if self._depth > MAX_DEPTH:
            raise _composer_error(
                f"the document is nested too deeply to read (more than {MAX_DEPTH} levels)", event
            )
        before = self._nodes
        text = event.value if isinstance(event, yaml.ScalarEvent) else ""
        self._count(1 + len(text) // CHARS_PER_NODE, event)
        if anchor is not None:
            self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= nests
            if anchor is not None:
                self._open.discard(anchor)
        if anchor is not None:
            self._weights[anchor] = self._nodes - before
        return node

    def _count(self, n: int, event: yaml.Event) -> None:
        self._nodes += n
        if self._nodes > MAX_NODES:
            raise _composer_error(
                f"the document stands for more than {MAX_NODES} values once its aliases "
                "are expanded (anchors and aliases are for small repeats)",
                event,
            )


def _composer_error(problem: str, event: yaml.Event) -> yaml.composer.ComposerError:
    mark = event.start_mark if isinstance(event.start_mark, yaml.error.Mark) else None
    return yaml.composer.ComposerError(None, None, problem, mark)


class _PairsLoader(BoundedLoader):
    """The bounded loader, building `Pairs` for mappings so repeated keys survive."""


def safe_load(text: str | bytes) -> object:
    """`yaml.safe_load` within the same bounds (a bomb is a `yaml.YAMLError`), for readers that
    want plain dicts (the CLI reading a user's file before sending it)."""
    return yaml.load(text, Loader=BoundedLoader)


_MERGE = "tag:yaml.org,2002:merge"


def _construct_pairs(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[Pairs]:
    """A mapping as `Pairs`; keys merged in with `<<` give way to the mapping's own keys."""
    pairs = Pairs()
    yield pairs  # yielded first, as PyYAML's own constructors do, so anchors may recurse
    own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE)
    loader.flatten_mapping(node)
    split = len(node.value) - own
    merged: list[tuple[object, object]] = []
    for key_node, value_node in node.value[:split]:  # later merged mappings win
        key = loader.construct_object(key_node)
        merged = [(k, v) for k, v in merged if k != key]
        merged.append((key, loader.construct_object(value_node)))
    own_pairs = [
        (loader.construct_object(k), loader.construct_object(v)) for k, v in node.value[split:]
    ]
    own_keys = [k for k, _ in own_pairs]
    pairs.extend((k, v) for k, v in merged if k not in own_keys)
    pairs.extend(own_pairs)


_PairsLoader.add_constructor("tag:yaml.org,2002:map", _construct_pairs)


def _yaml_load(text: str) -> object:
    return yaml.load(text, Loader=_PairsLoader)  # a SafeLoader subclass: no arbitrary objects


def _yaml_message(text: str, err: yaml.MarkedYAMLError) -> str:
    mark = err.problem_mark or err.context_mark
    problem = err.problem or err.context or "this is not valid YAML"
    if mark is None:
        return f"not valid YAML: {problem}"
    message = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    if err.context and err.problem and err.context_mark is not None:
        message += f" ({err.context} at line {err.context_mark.line + 1})"
    if "\\t" in problem or "\t" in problem:
        message += "; YAML indentation must use spaces, not tabs"
    else:
        message += next((f"; {hint}" for known, hint in _YAML_HINTS if known in problem), "")
    return message + _quote_line(text, mark.line + 1)


_YAML_HINTS = (
    (
        "mapping values are not allowed",
        "a `key: value` cannot start here: indent this line like the keys above it, or put "
        "a value holding ': ' in quotes",
    ),
    (
        "expected <block end>",
        "this line is indented differently from the lines above it at the same level; line "
        "up the keys of one mapping (and the `-` items of one list) in the same column",
    ),
    (
        "did not find expected key",
        "this line is not indented like the other keys of its mapping; line them up",
    ),
    (
        "did not find expected '-' indicator",
        "this line breaks a list: line up its `-` items in one column",
    ),
    (
        "could not find expected ':'",
        "a key needs a `:` after it; a text that spans lines needs quotes",
    ),
    (
        "found undefined alias",
        "`*name` must refer to an anchor `&name` defined above it",
    ),
    (
        "found unexpected end of stream",
        "a quote or bracket opened here is never closed",
    ),
)


# --- JSON -----------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _json_message(text: str, err: json.JSONDecodeError) -> str:
    found = _found(text, err.pos)
    where = f"line {err.lineno}, column {err.colno}"
    msg = err.msg
    if msg == "Expecting value":
        word = _WORD.match(text, err.pos)
        if word is not None:
            w = word.group(0)
            what = (
                f"expected a value, found '{w}' — a bare {w} is not JSON; write a number, "
                f'true, false, null or a quoted string such as "{w}"'
            )
        elif err.pos >= len(text.rstrip()):
            what = "expected a value, but the document ends here; a '}' or ']' may be missing"
        elif text[err.pos] in "}]":
            what = f"expected a value, found {found} — is there a comma too many before it?"
        else:
            what = (
                "expected a value (a number, a quoted string, true, false, null, {...} or "
                f"[...]), found {found}"
            )
    elif msg == "Expecting ',' delimiter":
        what = f"expected ',' between two entries, found {found}"
        prev = _previous_token_line(text, err.pos)
        if err.pos >= len(text.rstrip()):
            what = "the document ends here; a '}' or ']' is missing"
        elif prev is not None and prev < err.lineno:
            what += f" — a comma is probably missing at the end of line {prev}"
    elif msg == "Expecting ':' delimiter":
        what = f"expected ':' after the key, found {found}"
    elif msg.startswith("Expecting property name"):
        what = f"expected a key in double quotes, found {found}"
        if text[err.pos : err.pos + 1] == "}":
            what += " — remove the comma after the last entry"
    elif msg == "Extra data":
        what = (
            f"the JSON document ends before this point, found {found} — "
            "the braces are not balanced (a '}' too many, or a '{' missing earlier)"
        )
    elif msg.startswith("Unterminated string"):
        what = "a quoted string is never closed"
    elif msg.startswith("Invalid control character"):
        what = "a line break or control character inside a quoted string; close the string first"
    elif msg.startswith("Invalid \\escape") or msg.startswith("Invalid \\u"):
        what = "an invalid backslash escape inside a string; write \\\\ for a backslash"
    else:
        what = msg[:1].lower() + msg[1:]
    return f"{where}: {what}" + _quote_line(text, err.lineno)


def _found(text: str, pos: int) -> str:
    if pos >= len(text):
        return "the end of the document"
    word = _WORD.match(text, pos)
    if word is not None:
        return f"'{word.group(0)}'"
    ch = text[pos]
    if ch == '"':
        end = text.find('"', pos + 1)
        if 0 < end - pos <= 40 and "\n" not in text[pos:end]:
            return f"the text {text[pos : end + 1]}"
    return "a line break" if ch in "\r\n" else f"'{ch}'"


def _previous_token_line(text: str, pos: int) -> int | None:
    """The line number of the last non-blank character before `pos`."""
    head = text[:pos].rstrip()
    return head.count("\n") + 1 if head else None


def _quote_line(text: str, lineno: int) -> str:
    lines = text.split("\n")
    if not 1 <= lineno <= len(lines):
        return ""
    line = lines[lineno - 1].strip()
    if not line:
        return ""
    if len(line) > 80:
        line = line[:79] + "…"
    return f"; line {lineno} reads: {line}"

"""Reading one mapping of a document field by field, with a plain sentence for each mistake.

A `Fields` wraps one mapping and its JSON pointer. Each getter checks one field's type and range
and returns its value, the default when the field is absent, or None when it is broken (the
problem is already recorded). A field given as null (`max:` with nothing after it in YAML)
counts as absent. `finish()` reports the fields nobody asked for, with the closest
known field as a suggestion, so a typo such as `countt` does not pass silently.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import TypeVar

from shoal.documents.collect import ProblemList, child
from shoal.documents.names import NAME_RULE, is_name, suggest
from shoal.documents.tree import describe, is_int, is_list, is_mapping, key_text, pairs_of, quote

_E = TypeVar("_E", bound=StrEnum)

_PLACEHOLDER = re.compile(r"(?i)x+|y+|z+|\?+|\.\.\.|<.*>|tbd|todo|n/a|none|null|-")
_DIGITS = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SECONDS = re.compile(r"(?i)([+-]?(\d+\.?\d*|\.\d+))\s*(s|sec|secs|seconds?)")
_BOOLEAN_WORDS = {"true", "false", "yes", "no", "on", "off"}


def is_placeholder(text: str) -> bool:
    """True for texts such as "x", "???", "<size>" or "TBD" that stand for a value not given."""
    return _PLACEHOLDER.fullmatch(text.strip()) is not None


def mapping(value: object, path: str, out: ProblemList, what: str) -> Fields | None:
    """`Fields` over `value`, or None (with a problem) when it is not a mapping."""
    if not is_mapping(value):
        out.add(path, f"{what} must be a mapping of fields, found {describe(value)}")
        return None
    return Fields(value, path, out)


class Fields:
    """One mapping of the document, read field by field."""

    def __init__(self, data: object, path: str, out: ProblemList) -> None:
        self.path = path
        self.out = out
        self.values: dict[str, object] = {}
        """The fields given a value (not null), in document order."""
        self._all: dict[str, object] = {}
        self._asked: set[str] = set()
        for key, value in pairs_of(data):
            if not isinstance(key, str):
                out.add(path, f"the key {key_text(key)} is not a field name; keys are text")
            elif key in self._all:
                out.add(child(path, key), f"'{key}' is given more than once; give it once")
            else:
                self._all[key] = value
                if value is not None:
                    self.values[key] = value

    def entries(self) -> list[tuple[str, object]]:
        """Every field, null ones included, for mappings whose keys are names, not fields."""
        return list(self._all.items())

    def at(self, key: str) -> str:
        return child(self.path, key)

    def problem(self, key: str, message: str) -> None:
        self.out.add(self.at(key), message)

    def has(self, key: str) -> bool:
        self._asked.add(key)
        return key in self.values

    def misplaced(self, key: str, message: str) -> None:
        """Report `key` with `message` when it is given: a field that belongs elsewhere.

        Unlike `has`, an absent key is not added to the fields suggested by `finish`.
        """
        if key in self._all:
            self._asked.add(key)
            self.problem(key, message)

    def raw(self, key: str, *, required: str | None = None) -> object | None:
        """The value as read; when absent, None (and a problem if `required` says why)."""
        self._asked.add(key)
        if key in self.values:
            return self.values[key]
        if required is not None:
            state = "empty" if key in self._all else "missing"
            self.problem(key, f"'{key}' is {state}: {required}")
        return None

    def text(self, key: str, *, required: str | None = None, empty_ok: bool = True) -> str | None:
        value = self.raw(key, required=required)
        if value is None:
            return None
        if not isinstance(value, str):
            self.problem(key, f"expected text, found {describe(value)}{_quote_hint(value)}")
            return None
        if not empty_ok and not value.strip():
            self.problem(key, "must not be empty")
            return None
        return value

    def name(self, key: str, *, required: str | None = None) -> str | None:
        """A name (see `shoal.documents.names`); an invalid one is reported and returned as None."""
        value = self.text(key, required=required)
        if value is None:
            return None
        if not is_name(value):
            self.problem(key, f"{quote(value)} is not a valid name: {NAME_RULE}")
            return None
        return value

    def ref(self, key: str, *, required: str | None = None) -> str | None:
        """A catalog reference (an id or a name); a whole number is taken as its id text."""
        value = self.raw(key, required=required)
        if is_int(value):
            return str(value)
        if isinstance(value, str) and value.strip():
            return value
        if key in self.values:
            self.problem(key, f"expected an id or a name, found {describe(value)}")
        return None

    def integer(
        self,
        key: str,
        *,
        minimum: int,
        maximum: int | None = None,
        default: int | None = None,
        required: str | None = None,
        noun: str = "number",
        meaning: str = "",
    ) -> int | None:
        """A whole number >= `minimum` (and <= `maximum`); `default` when absent."""
        value = self.raw(key, required=required)
        if key not in self.values:
            return default
        if is_int(value):
            if value < minimum:
                self.problem(key, f"must be at least {minimum}, found {describe(value)}")
                return None
            if maximum is not None and value > maximum:
                self.problem(key, f"must be at most {maximum}, found {describe(value)}")
                return None
            return value
        self.problem(key, _integer_message(value, minimum, noun, meaning))
        return None

    def number(
        self,
        key: str,
        *,
        minimum: float,
        above: bool = False,
        default: float | None = None,
        unit: str = "",
    ) -> float | None:
        """A finite number (whole or not) >= `minimum`, or > it with `above`; `default` when
        absent. `unit` ("seconds") names what the number counts, for messages."""
        value = self.raw(key)
        if key not in self.values:
            return default
        if isinstance(value, int | float) and not isinstance(value, bool) and _finite(value):
            if value < minimum or (above and value == minimum):
                relation = "greater than" if above else "at least"
                self.problem(key, f"must be {relation} {_plain(minimum)}, found {describe(value)}")
                return None
            return float(value)
        self.problem(key, _number_message(value, minimum, above, unit))
        return None

    def flag(self, key: str, *, default: bool) -> bool | None:
        """true or false; `default` when absent."""
        value = self.raw(key)
        if key not in self.values:
            return default
        if isinstance(value, bool):
            return value
        hint = ""
        if isinstance(value, str) and value.strip().lower() in _BOOLEAN_WORDS:
            hint = "; write true or false without quotes"
        elif is_int(value) and value in (0, 1):
            hint = "; write true or false, not 1 or 0"
        self.problem(key, f"expected true or false, found {describe(value)}{hint}")
        return None

    def choice(
        self,
        key: str,
        enum: type[_E],
        *,
        default: _E | None = None,
        required: str | None = None,
    ) -> _E | None:
        value = self.raw(key, required=required)
        if key not in self.values:
            return default
        allowed = [e.value for e in enum]
        if isinstance(value, str) and value in allowed:
            return enum(value)
        found = f"'{value}'" if isinstance(value, str) else describe(value)
        hint = _choice_hint(value, allowed) if isinstance(value, str) else ""
        self.problem(key, f"unknown {key} {found}{hint}; choose one of {', '.join(allowed)}")
        return None

    def items(self, key: str, *, what: str) -> list[tuple[object, str]]:
        """The elements of a list field with their pointers; [] when absent, null or broken."""
        value = self.raw(key)
        if value is None:
            return []
        if not is_list(value):
            example = " (one '- name: ...' entry each)" if is_mapping(value) else ""
            self.problem(key, f"expected a list of {what}{example}, found {describe(value)}")
            return []
        return [(item, child(self.at(key), i)) for i, item in enumerate(value)]

    def names(self, key: str, *, what: str = "name") -> list[tuple[str, str]] | None:
        """A list of names, each with its pointer; [] when absent, None when broken."""
        value = self.raw(key)
        if key not in self.values:
            return []
        if not is_list(value):
            self.problem(key, f"expected a list of {what}s, found {describe(value)}")
            return None
        items: list[tuple[str, str]] = []
        broken = False
        for i, item in enumerate(value):
            where = child(self.at(key), i)
            if not isinstance(item, str):
                self.out.add(where, f"expected a {what}, found {describe(item)}")
                broken = True
            else:
                items.append((item, where))
        return None if broken else items

    def text_map(self, key: str) -> dict[str, str] | None:
        """A mapping of text to text (metadata, labels); {} when absent, None when broken."""
        value = self.raw(key)
        if key not in self.values or value is None:
            return {}
        if not is_mapping(value):
            self.problem(key, f"expected a mapping of text to text, found {describe(value)}")
            return None
        inner = Fields(value, self.at(key), self.out)
        before = len(self.out)
        result: dict[str, str] = {}
        for k, v in inner.entries():
            if isinstance(v, str):
                result[k] = v
            else:
                inner.problem(k, f"expected text, found {describe(v)}{_quote_hint(v)}")
        return result if len(self.out) == before else None

    def finish(self) -> None:
        """Report every field that was never asked for."""
        known = sorted(self._asked)
        for key in self._all:
            if key in self._asked:
                continue
            hint = suggest(key, known)
            if not hint:
                hint = f"; known fields here: {', '.join(known)}" if known else ""
            self.problem(key, f"unknown field '{key}'{hint}")


def _quote_hint(value: object) -> str:
    if isinstance(value, bool | int | float):
        return f"; write it in quotes if you mean the text, e.g. {quote(describe(value))}"
    return ""


def _choice_hint(value: str, allowed: list[str]) -> str:
    """ " (did you mean 'x'?)", also for a choice written in the wrong case or with '-'."""
    folded = value.strip().lower().replace("-", "_").replace(" ", "_")
    for option in allowed:
        if option.lower().replace("-", "_") == folded:
            return f" (did you mean '{option}'?)"
    return suggest(value, allowed)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _plain(value: float) -> str:
    """A number as a person writes it: 0, 2.5."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _number_message(value: object, minimum: float, above: bool, unit: str) -> str:
    bound = f"more than {_plain(minimum)}" if above else f"{_plain(minimum)} or more"
    noun = f"a number of {unit}" if unit else "a number"
    wanted = f"{noun} ({bound})"
    if isinstance(value, str):
        text = value.strip()
        if is_placeholder(text):
            return f"{quote(value)} is a placeholder, not a number; give {wanted}"
        if _DECIMAL.fullmatch(text):
            return f"expected {wanted}, found {describe(value)}; write it without quotes"
        seconds = _SECONDS.fullmatch(text)
        if seconds and unit == "seconds":
            return (
                f"expected {wanted}, found {describe(value)}; write the number alone, "
                f"e.g. {seconds.group(1)}"
            )
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"expected a finite number, found {describe(value)}"
    return f"expected {wanted}, found {describe(value)}"


def _integer_message(value: object, minimum: int, noun: str, meaning: str) -> str:
    if minimum == 1:
        wanted = "a positive integer"
    elif minimum == 0:
        wanted = "a whole number (0 or more)"
    else:
        wanted = f"a whole number of at least {minimum}"
    subject = f"{meaning} as {wanted}" if meaning else wanted
    if isinstance(value, str):
        if is_placeholder(value):
            return f"{quote(value)} is a placeholder, not a {noun}; give {subject}"
        if _DIGITS.fullmatch(value.strip()):
            return f"expected {subject}, found {describe(value)}; write it without quotes"
    if isinstance(value, float) and value.is_integer():
        return f"expected {subject}, found {value!r}; write it without the decimal point"
    return f"expected {subject}, found {describe(value)}"

"""Regular expressions from documents, run by RE2: linear time whatever the pattern.

`allowed_pattern` constraints (native parameters, HOT parameters, Senlin `os.heat.stack`
profiles) come from tenants. Python's `re` backtracks: `(a+)+$` against forty `a`s and a `!`
keeps a core busy for hours. RE2 never backtracks; a pattern it cannot run (backreferences,
lookaround) is a problem at the constraint's pointer, as is one longer than MAX_PATTERN_CHARS
or one whose compiled program would exceed RE2's memory bound. Heat templates in the wild use
lookahead (password rules); the HOT reader leaves such a constraint unchecked with a notice
(`only_backtracking`) rather than run it with a backtracking engine.
"""

from __future__ import annotations

import re
from functools import lru_cache

import re2

MAX_PATTERN_CHARS = 1_000
MAX_PATTERN_MEMORY = 1 << 20


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a tenant's bad pattern is a problem, not a line on stderr
    options.max_mem = MAX_PATTERN_MEMORY
    return options


@lru_cache(maxsize=256)
def compiled(pattern: str) -> re2._Regexp[str] | str:
    """The pattern compiled by RE2, or the sentence saying why it cannot be used."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"a pattern has at most {MAX_PATTERN_CHARS} characters, found {len(pattern)}"
    try:
        return re2.compile(pattern, _options())
    except re2.error as err:
        reason = err.args[0] if err.args else str(err)
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        return (
            f"not a pattern Shoal can run ({reason}); patterns are matched by RE2, without "
            "backreferences or lookaround"
        )


def only_backtracking(pattern: str) -> bool:
    """True for a pattern RE2 refuses but Python's `re` reads (lookaround, backreferences):
    valid in Heat, never run here. Compiling is safe; only matching backtracks."""
    if len(pattern) > MAX_PATTERN_CHARS or problem(pattern) is None:
        return False
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def problem(pattern: str) -> str | None:
    """Why `pattern` cannot be used, or None."""
    found = compiled(pattern)
    return found if isinstance(found, str) else None


def fullmatch(pattern: str, value: str) -> bool:
    """True when all of `value` matches (a pattern that cannot be used matches nothing)."""
    found = compiled(pattern)
    return not isinstance(found, str) and found.fullmatch(value) is not None


def match_to_end(pattern: str, value: str) -> bool:
    """Heat's test: the first match from the start must end where the value ends."""
    found = compiled(pattern)
    if isinstance(found, str):
        return False
    m = found.match(value)
    return m is not None and m.end() == len(value)

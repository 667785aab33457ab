"""The naming rule shared by every name in a document, and "did you mean" suggestions.

Names become node names, host-facing identifiers and URL segments, so they are kept to a safe
alphabet; a `/` would be ambiguous in a grouping member such as `db/data`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")

NAME_RULE = (
    "a name starts with a letter or digit and holds only letters, digits, '_', '.' and '-', "
    "at most 63 characters"
)


def is_name(text: str) -> bool:
    return _NAME.fullmatch(text) is not None


def suggest(word: str, candidates: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the closest candidate, or "" when nothing is close."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def listing(words: Iterable[str], limit: int = 12) -> str:
    """Words joined for a message, cut short with a count when many."""
    items = list(words)
    if not items:
        return "(none)"
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    return ", ".join(items)


def unknown(kind: str, word: str, candidates: Iterable[str]) -> str:
    """ "unknown zone 'az3' (did you mean 'az2'?)" or "unknown zone 'x'; known zones: az1, az2"."""
    known = list(candidates)
    hint = suggest(word, known)
    if hint:
        return f"unknown {kind} '{word}'{hint}"
    return f"unknown {kind} '{word}'; known {kind}s: {listing(known)}"

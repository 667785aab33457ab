"""Heat's str_replace with its work and its result bounded, for every evaluator that needs it.

Heat replaces the longest keys first and never scans replaced text again. Done naively (one
recursion per key, or one pass over every piece per key) 3,000 keys overflow the stack and a
50k-character template with 50k keys, or a short key whose value is long, makes gigabytes. Here
the work (pieces visited, characters scanned) and the length of the result are counted before
anything is joined; over either bound is `OverBudget`, which callers turn into a problem (a
document) or a pending value (an output read at GET time), never a crash.
"""

from __future__ import annotations

MAX_TEXT_CHARS = 1 << 20
"""The longest text one replacement may make (1 MiB; Nova's user_data is at most 64 KiB)."""
MAX_REPLACE_WORK = 2_000_000
"""Pieces visited plus characters scanned / 64, over all keys, for one replacement."""
SCAN_CHARS_PER_STEP = 64


class OverBudget(Exception):
    """A replacement (or any bounded evaluation) that would do or make too much."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def replaced(
    template: str,
    params: dict[str, str],
    *,
    max_chars: int = MAX_TEXT_CHARS,
    max_work: int = MAX_REPLACE_WORK,
    found: set[str] | None = None,
) -> tuple[str, int]:
    """(the text with every key replaced, the work it took), or OverBudget. `found` collects
    the keys that were found (and replaced): a key inside a longer key's match is not."""
    pieces: list[tuple[str, bool]] = [(template, False)]  # (text, already a replacement)
    work = 0
    length = len(template)
    for key in sorted((k for k in params if k), key=lambda k: (-len(k), k)):
        value = params[key]
        split: list[tuple[str, bool]] = []
        scanned = 0
        for text, done in pieces:
            if done or key not in text:
                split.append((text, done))
                scanned += 0 if done else len(text)
                continue
            scanned += len(text)
            if found is not None:
                found.add(key)
            parts = text.split(key)
            length += (len(parts) - 1) * (len(value) - len(key))
            if length > max_chars:
                raise OverBudget(f"the text would be longer than {max_chars} characters")
            for i, part in enumerate(parts):
                if i:
                    split.append((value, True))
                split.append((part, False))
        work += len(pieces) + scanned // SCAN_CHARS_PER_STEP
        if work > max_work:
            raise OverBudget(
                f"replacing {len(params)} keys takes more than {max_work} steps; use fewer keys "
                "or a shorter template"
            )
        pieces = split
    return "".join(text for text, _ in pieces), work


def replace_all(template: str, params: dict[str, str]) -> str:
    """Heat's str_replace within the default bounds (OverBudget beyond them)."""
    return replaced(template, params)[0]

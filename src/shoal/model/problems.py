"""Problems found in a document or request, reported all at once.

A `Problem` names where (a JSON pointer, or a file position for syntax errors) and what, in a
plain sentence. `InvalidDocument` carries every problem found, so a user fixes them in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input: `path` is a JSON pointer ("" for the whole document)."""

    path: str
    message: str

    def __str__(self) -> str:
        where = self.path or "/"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class InvalidDocument(Exception):
    """Raised with every problem of a document; never with a partial list."""

    def __init__(self, problems: list[Problem]) -> None:
        if not problems:
            raise ValueError("InvalidDocument needs at least one problem")
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


def pointer(*parts: str | int) -> str:
    """Build a JSON pointer (RFC 6901) from path parts, escaping '~' and '/'."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)

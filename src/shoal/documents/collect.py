"""Collecting problems while reading, so a document reports every mistake in one pass.

Readers never raise on bad input: they add a `Problem` here and carry on with the next field or
element. The loader raises `InvalidDocument` once, at the end, if anything was added.
"""

from __future__ import annotations

from shoal.model.problems import InvalidDocument, Problem, pointer


def child(path: str, *parts: str | int) -> str:
    """The JSON pointer of `parts` below `path`."""
    return path + pointer(*parts)


class ProblemList:
    """Problems found so far, in the order they were found."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(Problem(path, message))

    def __len__(self) -> int:
        return len(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise InvalidDocument(self.items)

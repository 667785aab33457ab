"""JSON pointers into a request's nested files: `/files/<name>` then the pointer inside it."""

from __future__ import annotations

from shoal.model.problems import pointer


def file_pointer(name: str) -> str:
    return pointer("files", name)

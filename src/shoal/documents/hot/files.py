"""Where nested templates and `get_file` contents come from: a `files` map, or the disk.

Given to the API, a template brings its files as Heat's API takes them: a mapping of name ->
text, looked up by the name as written or relative to the file that names it. Read from disk
(`shoal plan TEMPLATE -e ENV`), names resolve relative to the naming file, as the Heat client
resolves them; a request never reads the server's disk.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from shoal.documents.files import bounded_read
from shoal.documents.syntax import parse
from shoal.model.problems import InvalidDocument, Problem

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_FILES = 2_000
"""Files one template may bring or read (TripleO's overcloud, the largest user, sends a few
hundred): a `files` map of 50,000 names is refused before one is looked at."""
MAX_FILES_CHARS = 8 << 20
"""Characters of all those files together (Heat's API takes at most 1 MiB of body by default;
TripleO raises it to 4 MiB)."""


def files_problems(files: dict[str, str], where: str = "/files") -> list[Problem]:
    """The `files` map's count and total size against MAX_FILES and MAX_FILES_CHARS."""
    problems = []
    if len(files) > MAX_FILES:
        problems.append(
            Problem(where, f"{len(files)} files; a template brings at most {MAX_FILES}")
        )
    total = sum(len(k) + len(v) for k, v in files.items())
    if total > MAX_FILES_CHARS:
        problems.append(
            Problem(
                where,
                f"the files hold {total} characters in all (names included); "
                f"at most {MAX_FILES_CHARS}",
            )
        )
    return problems


class Files:
    def __init__(
        self,
        given: dict[str, str] | None = None,
        *,
        disk: bool = False,
        trees: dict[tuple[str, str], object] | None = None,
    ) -> None:
        self.given = dict(given or {})
        self.trees = trees if trees is not None else {}
        """Parsed files by (name, text): a file nested many times is parsed once (shareable)."""
        self.disk = disk
        self.root = ""
        """The top template's directory, on disk."""
        self.read_names: list[str] = []

    def relative(self, name: str) -> str:
        """A file's name for a message: relative to the top template's directory on disk."""
        if self.disk and self.root and posixpath.isabs(name):
            return posixpath.relpath(name, self.root)
        return name

    def tree(self, name: str, text: str) -> object:
        """The parsed file (InvalidDocument if it cannot be read), parsed once per text."""
        key = (name, text)
        if key not in self.trees:
            source = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
            self.trees[key] = parse(text, source)
        return self.trees[key]

    def read(self, name: str, base: str) -> tuple[str, str] | None:
        """(resolved name, text) of the file `name` as named from the file `base`."""
        plain = name.removeprefix("file://")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), plain))
        for candidate in (name, plain, joined):
            if candidate in self.given:
                return candidate, self.given[candidate]
        if not self.disk:
            return None
        path = Path(plain) if posixpath.isabs(plain) else Path(joined)
        try:
            text = bounded_read(path, MAX_FILE_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        key = str(path)
        self.given[key] = text
        too_many = files_problems(self.given, "")
        if too_many:  # read from disk, one by one: refused once past the bounds
            raise InvalidDocument(too_many)
        self.read_names.append(key)
        return key, text

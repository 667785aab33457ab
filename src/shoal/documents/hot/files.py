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

MAX_FILE_BYTES = 4 * 1024 * 1024


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
        self.read_names.append(key)
        return key, text

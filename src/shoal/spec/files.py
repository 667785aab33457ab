"""Reading a document file, with a missing or unreadable file reported like any other problem."""

from __future__ import annotations

from pathlib import Path

from shoal.model.problems import InvalidDocument, Problem


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, or InvalidDocument (path "") saying plainly why it cannot be read."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        reason = "no such file"
    except IsADirectoryError:
        reason = "it is a directory, not a file"
    except PermissionError:
        reason = "permission denied"
    except OSError as err:
        reason = err.strerror or str(err)
    raise InvalidDocument([Problem("", f"cannot read {p}: {reason}")])

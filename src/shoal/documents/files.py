"""Reading a document file, with a missing or unreadable file reported like any other problem."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from shoal.model.problems import InvalidDocument, Problem

MAX_FILE_BYTES = 2 << 20
"""A document, environment or `get_file` read from disk, at most (the API's default body limit:
a larger file could not be sent anyway)."""


def read_bytes(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, or InvalidDocument (path "") saying plainly why it cannot be read:
    missing, a directory, not a regular file (`/dev/zero`, a FIFO), or larger than `limit`."""
    p = Path(path)
    try:
        return bounded_read(p, limit)
    except FileNotFoundError:
        reason = "no such file"
    except IsADirectoryError:
        reason = "it is a directory, not a file"
    except PermissionError:
        reason = "permission denied"
    except OSError as err:
        reason = err.strerror or str(err)
    raise InvalidDocument([Problem("", f"cannot read {p}: {reason}")])


def bounded_read(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of a regular file, else OSError (opened without blocking, so a
    FIFO is refused rather than waited on)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "it is a directory, not a file")
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise OSError(errno.EFBIG, f"it is larger than {limit} bytes")
    return b"".join(chunks)

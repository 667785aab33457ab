"""Private files: what Shoal stores is for its owner only (files 0600, directories 0700).

The store, the simulated cloud's state and the local provider's records hold tenants' documents,
token hashes and webhook secret hashes; like the admin-token file, none of it is readable by
other users of the machine, whatever the umask. Existing files and directories are narrowed too,
so a home created by an older Shoal is fixed on the next start. This module imports nothing
else from Shoal, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path, *, ours: bool = True) -> Path:
    """Make `path` (and missing parents) a directory only its owner can enter. With `ours`
    False (a directory someone chose to put one file in) an existing one is left as it is."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):  # mkdir(parents=True) would make the parents 0755
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
        _narrow(folder, DIR_MODE)
    if ours:
        _narrow(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty if missing, readable and writable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    _narrow(path, FILE_MODE)
    return path


def narrow(path: Path) -> None:
    """If `path` exists, take away every permission of group and others."""
    with contextlib.suppress(FileNotFoundError):
        _narrow(path, path.stat().st_mode & 0o700)


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file, then rename), mode 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def open_private_append(path: Path) -> int:
    """A file descriptor appending to `path`, created 0600 if missing."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)


def _narrow(path: Path, mode: int) -> None:
    # Only the owner may chmod; a file someone else owns (a shared, pre-made dir) is left alone.
    with contextlib.suppress(PermissionError):
        if path.stat().st_mode & 0o777 != mode:
            os.chmod(path, mode)

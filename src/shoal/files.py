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
import shutil
import stat
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
    # Never through a link someone left at the temporary name (a node's own directory).
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def open_private_append(path: Path) -> int:
    """A file descriptor appending to `path`, created 0600 if missing; a symlink there is
    refused (`OSError`), so a log a node replaced by a link never writes through it."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, FILE_MODE)


def _narrow(path: Path, mode: int) -> None:
    # Only the owner may chmod; a file someone else owns (a shared, pre-made dir) is left alone.
    with contextlib.suppress(PermissionError):
        if path.stat().st_mode & 0o777 != mode:
            os.chmod(path, mode)


# -- reading what a node wrote (issue 29) ---------------------------------------------------
#
# A node's directory is written by its tenant's code, which can replace any file or directory
# in it with a symlink to something of Shoal's (the admin token). What Shoal reads or writes
# there is opened one component at a time relative to the directory, never following a link.

_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_beneath(root: Path, relative: str | Path, flags: int = os.O_RDONLY) -> int:
    """A file descriptor for `root/relative`, opened without following a symlink in any
    component below `root` (`OSError` if one is a link, or is missing). The file itself must be
    a regular file (`IsADirectoryError` / `OSError` otherwise)."""
    parts = Path(relative).parts
    if not parts or any(p in ("", ".", "..") or "/" in p for p in parts):
        raise FileNotFoundError(str(relative))
    fd = os.open(root, _NOFOLLOW_DIR)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
        out = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        if not stat_is_regular(out):
            raise FileNotFoundError(str(relative))
        os.set_blocking(out, True)
    except BaseException:
        os.close(out)
        raise
    return out


def stat_is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def read_tail_beneath(root: Path, relative: str | Path, max_bytes: int) -> bytes | None:
    """The last `max_bytes` of `root/relative`, opened as `open_beneath` does; None if it
    cannot be (missing, not a regular file, or reached through a link)."""
    try:
        fd = open_beneath(root, relative)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - max_bytes))
        return f.read(max_bytes)


def read_beneath(root: Path, relative: str | Path, max_bytes: int) -> bytes | None:
    """The whole of `root/relative` if it holds at most `max_bytes`; None otherwise or if it
    cannot be opened as `open_beneath` does."""
    try:
        fd = open_beneath(root, relative)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(max_bytes + 1)
    return None if len(data) > max_bytes else data


def has_link_beneath(root: Path, path: Path) -> bool:
    """Whether any component of `path` below `root` is a symlink (or `path` is not below)."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return True
    current = root
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            return True
    return False


def open_dir_beneath(root: Path, relative: str | Path) -> int:
    """A file descriptor of the directory `root/relative`, each component below `root` opened
    without following a link and made (0700) if missing. `OSError` if one is a link or not a
    directory: what Shoal writes into a node's tree never lands outside it, even if the node
    swaps a directory for a link meanwhile."""
    fd = os.open(root, _NOFOLLOW_DIR)
    try:
        for part in Path(relative).parts:
            if part in ("", ".", "..", "/"):
                raise FileNotFoundError(str(relative))
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, DIR_MODE, dir_fd=fd)
            nxt = os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_beneath(
    root: Path, relative: str | Path, data: str | bytes, mode: int = FILE_MODE
) -> None:
    """Write `root/relative` atomically with `mode`, as `open_dir_beneath` reaches its folder."""
    path = Path(relative)
    folder = open_dir_beneath(root, path.parent)
    try:
        tmp = f".{path.name}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE, dir_fd=folder
        )
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            os.fchmod(f.fileno(), mode)
        os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.close(folder)


def remove_tree_beneath(root: Path, relative: str | Path) -> None:
    """Remove `root/relative` (a tree, or a file or link) without following links."""
    path = Path(relative)
    folder = open_dir_beneath(root, path.parent)
    try:
        try:
            st = os.lstat(path.name, dir_fd=folder)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path.name, dir_fd=folder)
        else:
            os.unlink(path.name, dir_fd=folder)
    finally:
        os.close(folder)

"""Volumes of the local provider: plain directories with a size budget, attached by symlink.

A volume lives at `home/volumes/<id>/`; its budget and names sit in a small metadata file inside
it, so the node server can report `size_gb` and `used_bytes` by reading the directory alone.
Attaching puts a symlink `workdir/volumes/<volume name>` on the server, so it appears in the
server's own view at once, without a restart. Standard library only: the node server imports it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import TypedDict

from shoal.files import open_dir_beneath, private_dir, read_beneath, write_private

META_NAME = ".shoal-volume.json"
LINKS_DIR = "volumes"


class VolumeView(TypedDict):
    """A volume as a server reports it in `GET /`."""

    name: str
    path: str
    size_gb: int
    used_bytes: int


def make_volume_dir(path: Path, *, volume_id: str, name: str, size_gb: int) -> None:
    """Create the directory and its metadata file; an existing one is left as it is."""
    private_dir(path)
    meta = path / META_NAME
    if not meta.exists():
        write_private(meta, json.dumps({"id": volume_id, "name": name, "size_gb": size_gb}))


def read_size_gb(path: Path) -> int:
    """The budget recorded for a volume directory (0 if unreadable)."""
    raw = read_beneath(path, META_NAME, 64 * 1024)  # the node may have made it a link
    try:
        data = json.loads(raw or b"")
    except ValueError:
        return 0
    size = data.get("size_gb", 0) if isinstance(data, dict) else 0
    return size if isinstance(size, int) else 0


def used_bytes(path: Path) -> int:
    """Bytes held by the files under `path`, metadata excluded, symlinks not followed."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            if root == str(path) and f.startswith(META_NAME):
                continue
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                continue
    return total


def remove_volume_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def attach(workdir: Path, link_name: str, target: Path) -> bool:
    """Link `target` as `workdir/volumes/<link_name>`; False if that name links elsewhere.
    Done through the folder's descriptor, opened without following a link: the node may have
    put one where `volumes/` was (it is replaced by a real folder)."""
    links = workdir / LINKS_DIR
    if links.is_symlink():
        links.unlink()  # the node's own link: never written (or chmodded) through
    private_dir(workdir)
    folder = open_dir_beneath(workdir, LINKS_DIR)
    try:
        try:
            return Path(os.readlink(link_name, dir_fd=folder)) == target
        except FileNotFoundError:
            pass
        except OSError:
            return False  # a file or folder of the node's own by that name
        tmp = f".{link_name}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        os.symlink(target, tmp, target_is_directory=True, dir_fd=folder)
        os.replace(tmp, link_name, src_dir_fd=folder, dst_dir_fd=folder)
        return True
    finally:
        os.close(folder)


def detach_all(workdir: Path, target: Path) -> None:
    """Remove every link in `workdir/volumes` that points at `target`."""
    links = workdir / LINKS_DIR
    if links.is_symlink() or not links.is_dir():
        return
    for link in links.iterdir():
        if link.is_symlink() and Path(os.readlink(link)) == target:
            link.unlink(missing_ok=True)


def attached_views(workdir: Path) -> list[VolumeView]:
    """The volumes linked into a server's workdir, read now (used by the node server)."""
    links = workdir / LINKS_DIR
    if not links.is_dir():
        return []
    out: list[VolumeView] = []
    for link in sorted(links.iterdir()):
        if not link.is_symlink() or link.name.startswith("."):
            continue
        target = Path(os.readlink(link))
        out.append(
            VolumeView(
                name=link.name,
                path=str(target),
                size_gb=read_size_gb(target),
                used_bytes=used_bytes(target) if target.is_dir() else 0,
            )
        )
    return out


def wipe_except_links(workdir: Path) -> None:
    """Empty a server's workdir (a fresh root disk) but keep its `volumes/` links, unfollowed."""
    private_dir(workdir)
    for entry in workdir.iterdir():
        is_dir = entry.is_dir() and not entry.is_symlink()
        if entry.name == LINKS_DIR and is_dir:
            continue
        if is_dir:
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)

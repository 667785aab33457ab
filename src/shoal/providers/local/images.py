"""Container images for local nodes, without a registry: imported once into the home's store.

No registry is reachable here (nor in an air-gapped cloud), so images come from files: a root
filesystem directory or tarball (`podman import`, given a name) or an image archive made by
`podman save` / `docker save` (`podman load`, named by the archive). Every node reads the
home's image store (podman.py), so one import serves them all. `busybox_rootfs` makes the
small image the tests, docs and example use, from Debian's busybox-static.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from shoal.providers.images import ImageField, ImageRefusedError, Imported
from shoal.providers.local.podman import Podman, home_store

BUSYBOX = Path("/usr/bin/busybox")
APPLETS = ("sh", "httpd", "echo", "sleep", "cat", "ls", "mkdir", "wget", "env", "true", "kill")
MAX_FILES = 200_000
MAX_BYTES = 8 * 2**30
_NAME = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$")


class ImageError(ImageRefusedError):
    """The image could not be imported (the message says why, `field` about what)."""


class LocalImages:
    """The home's image store (`ImageImporter`): `shoal image import` fills it, every node
    reads it."""

    def __init__(self, home: Path) -> None:
        self.home = home

    async def import_image(self, source: Path, name: str | None) -> Imported:
        """Raises `ImageError`, `podman.PodmanMissingError`."""
        return await asyncio.to_thread(import_image, self.home, source, name)


def valid_name(name: str) -> bool:
    return bool(_NAME.match(name)) and len(name) <= 255


def import_image(home: Path, source: Path, name: str | None) -> Imported:
    """Import `source` (a directory, a root filesystem tar, or an image archive) into the
    local provider's image store under `home`. Blocking: run it in a thread."""
    found = Podman.find()
    store = home_store(home)
    store.write(found)
    if not source.exists():
        raise ImageError(f"{source} does not exist")
    if name is not None and not valid_name(name):
        raise ImageError(f"{name!r} is not an image name (e.g. localhost/web:1)", ImageField.NAME)
    with tempfile.TemporaryDirectory() as tmp:
        tar = source
        if source.is_dir():
            _check_size(source)
            tar = Path(tmp) / "rootfs.tar"
            with tarfile.open(tar, "w") as out:
                out.add(source, arcname=".")
        if _is_archive(tar):
            args = ["load", "--quiet", "--input", str(tar)]
        elif name is None:
            raise ImageError(
                "a root filesystem needs a name (--name localhost/NAME:TAG)", ImageField.NAME
            )
        else:
            args = ["import", "--quiet", str(tar), name]
        done = subprocess.run(
            store.argv(found, *args),
            env=store.environment(),
            capture_output=True,
            timeout=600,
            check=False,
        )
    text = (done.stdout + done.stderr).decode(errors="replace").strip()
    if done.returncode != 0:
        raise ImageError(f"podman {args[0]} failed: {text[-2000:]}")
    last = text.splitlines()[-1] if text else ""
    return Imported(name=name or last.removeprefix("Loaded image: ").strip(), id=last)


def _check_size(root: Path) -> None:
    """Refuse the machine's root and directories bigger than any image should be, before
    tarring them (the path comes from a request)."""
    if root.resolve() == Path("/"):
        raise ImageError("/ is not an image's root filesystem")
    files = size = 0
    for dirpath, _dirs, names in os.walk(root):
        files += len(names)
        for n in names:
            p = Path(dirpath) / n
            if not p.is_symlink():
                size += p.stat().st_size if p.exists() else 0
        if files > MAX_FILES or size > MAX_BYTES:
            raise ImageError(
                f"{root} holds more than {MAX_FILES} files or {MAX_BYTES // 2**30} GiB: "
                "not a root filesystem to import (tar it, or `podman save` an image)"
            )


def _is_archive(tar: Path) -> bool:
    """An image archive (docker-archive or oci-archive) rather than a root filesystem."""
    try:
        with tarfile.open(tar) as t:
            names = {n.lstrip("./") for n in t.getnames()[:200]}
    except (tarfile.TarError, OSError):
        return False
    return "manifest.json" in names or "oci-layout" in names


def busybox_rootfs(target: Path, *, www: str = "busybox\n") -> Path:
    """A root filesystem of Debian's static busybox with its applet links and `/www/index.html`
    (`apt-get install busybox-static`)."""
    if not BUSYBOX.exists():
        raise ImageError(f"{BUSYBOX} is missing: apt-get install -y busybox-static")
    (target / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, target / "bin" / "busybox")
    for applet in APPLETS:
        link = target / "bin" / applet
        if not link.exists():
            os.symlink("busybox", link)
    for d in ("www", "tmp", "etc"):
        (target / d).mkdir(exist_ok=True)
    (target / "www" / "index.html").write_text(www)
    (target / "etc" / "passwd").write_text("root:x:0:0:root:/:/bin/sh\n")
    return target

"""Real containers on `local`: podman (runc) from Debian, an image built from busybox-static.

Skipped, never failed, on a machine without podman (`.ci/run` installs it, so CI runs them).
Every test's Shoal home gets the busybox image imported once (`shoal image import`'s code);
at teardown every container and pod any node of that home ran is removed.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.providers.local import images, podman
from tests.e2e.conftest import StartServer, start_server
from tests.support.server import sweep_local_nodes

IMAGE = "localhost/busybox:shoal"


def _podman() -> podman.Podman | None:
    try:
        return podman.Podman.find()
    except podman.PodmanMissingError:
        return None


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """A Shoal home whose local provider's image store holds `IMAGE`. Ask for it before
    `start_server`, so it is torn down after the server (a live server's manager would make
    the nodes swept here again)."""
    found = _podman()
    if found is None or not images.BUSYBOX.exists():
        pytest.skip("needs podman, runc and busybox-static (apt-get install ...)")
    # A short home: a node's API socket lives in its workdir, and a socket's path is at most
    # 108 bytes (deeper homes work too, with the socket under /tmp instead).
    home = Path(tempfile.mkdtemp(prefix="shc-"))
    rootfs = images.busybox_rootfs(tmp_path / "rootfs", www="hello from a container\n")
    images.import_image(home / "local", rootfs, IMAGE)
    try:
        yield home
    finally:
        sweep_local_nodes(home)  # its containers too, before the records go with the home
        shutil.rmtree(home, ignore_errors=True)


__all__ = ["IMAGE", "StartServer", "home", "start_server"]

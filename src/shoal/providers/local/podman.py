"""Where podman is, and the private configuration every local container runtime runs with.

Measured on these machines (docs/containers.md): crun fails under hybrid cgroups, runc works;
podman's default rlimits need CAP_SYS_RESOURCE, so `default_ulimits = []`; no registry is
reachable. So Shoal never touches /etc/containers: each runtime gets its own containers.conf,
storage.conf and registries.conf through `CONTAINERS_CONF`, `CONTAINERS_STORAGE_CONF` and
`CONTAINERS_REGISTRIES_CONF`.

Storage: images live once per Shoal home (`<home>/containers/storage`, what `shoal image
import` fills); each node has its own container store under its working directory that reads
that image store as an additional, read-only one. So an image imported once serves every node,
and one node's containers are not another's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shoal.files import private_dir, write_private
from shoal.providers.images import ImageToolMissingError

_WRITING = threading.Lock()
PACKAGES = "podman runc"
"""The Debian packages a container runtime needs (busybox-static too, for the test image)."""
PODMAN_ENV = "SHOAL_PODMAN"
RUNC_ENV = "SHOAL_RUNC"


class PodmanMissingError(ImageToolMissingError):
    """podman or runc is not installed: the message names the packages."""


@dataclass(frozen=True, slots=True)
class Podman:
    """The podman and runc programs."""

    podman: Path
    runc: Path

    @classmethod
    def find(cls, environ: Mapping[str, str] = os.environ) -> Podman:
        """From SHOAL_PODMAN/SHOAL_RUNC or PATH (and /usr/sbin, where Debian puts runc) of
        `environ`. Raises `PodmanMissingError` with one sentence naming what to install."""
        search = os.pathsep.join([environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
        podman = environ.get(PODMAN_ENV) or shutil.which("podman", path=search)
        runc = environ.get(RUNC_ENV) or shutil.which("runc", path=search)
        missing = [n for n, p in (("podman", podman), ("runc", runc)) if not p]
        if podman is None or runc is None:
            raise PodmanMissingError(
                f"containers need {' and '.join(missing)}, which this machine has not: "
                f"install the Debian packages `apt-get install -y {PACKAGES}` "
                f"(or set {PODMAN_ENV}/{RUNC_ENV})"
            )
        return cls(Path(podman), Path(runc))


@dataclass(frozen=True, slots=True)
class Store:
    """One set of podman configuration files and storage directories."""

    root: Path
    """Everything of this store is beneath it."""
    images: Path | None = None
    """A shared, read-only image store this one also reads (a node's), or None (the home's)."""

    @property
    def graphroot(self) -> Path:
        return self.root / "storage"

    @property
    def runroot(self) -> Path:
        """Podman refuses a runroot longer than 50 characters, so it is a short directory
        named by the store's path, under the temporary directory (state, not data)."""
        digest = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / "shoal-podman" / digest

    @property
    def containers_conf(self) -> Path:
        return self.root / "containers.conf"

    @property
    def storage_conf(self) -> Path:
        return self.root / "storage.conf"

    @property
    def registries_conf(self) -> Path:
        return self.root / "registries.conf"

    def write(self, podman: Podman) -> None:
        """Write the store's configuration files (idempotent; serialised, since servers
        started together write the home's files at once, through the same temporary names)."""
        with _WRITING:
            self._write(podman)

    def _write(self, podman: Podman) -> None:
        private_dir(self.root)
        for d in (self.graphroot, self.runroot.parent, self.runroot, self.root / "tmp"):
            private_dir(d)
        write_private(
            self.containers_conf,
            "\n".join(
                [
                    "[containers]",
                    # Podman's default rlimits fail without CAP_SYS_RESOURCE.
                    "default_ulimits = []",
                    "",
                    "[engine]",
                    'runtime = "runc"',
                    'cgroup_manager = "cgroupfs"',
                    'events_logger = "file"',
                    f"events_logfile_path = {_toml(self.root / 'events.log')}",
                    f"tmp_dir = {_toml(self.root / 'tmp')}",
                    "",
                    "[engine.runtimes]",
                    f"runc = [{_toml(podman.runc)}]",
                    "",
                ]
            ),
        )
        extra = f"additionalimagestores = [{_toml(self.images)}]" if self.images else ""
        write_private(
            self.storage_conf,
            "\n".join(
                [
                    "[storage]",
                    'driver = "overlay"',
                    f"graphroot = {_toml(self.graphroot)}",
                    f"runroot = {_toml(self.runroot)}",
                    "",
                    "[storage.options]",
                    extra,
                    "",
                ]
            ),
        )
        # No registry here: a short name resolves nowhere, so a missing image fails at once.
        write_private(self.registries_conf, "unqualified-search-registries = []\n")

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env["CONTAINERS_CONF"] = str(self.containers_conf)
        env["CONTAINERS_STORAGE_CONF"] = str(self.storage_conf)
        env["CONTAINERS_REGISTRIES_CONF"] = str(self.registries_conf)
        return env

    def argv(self, podman: Podman, *args: str) -> list[str]:
        """A podman command on this store; run it with `environment()` (the storage is named
        by storage.conf only: `--root` would drop its additional image store)."""
        return [str(podman.podman), "--runtime", str(podman.runc), *args]


def has_images(home: Path) -> bool:
    """Whether the home's image store holds any image (`shoal image import` ran): without one
    no container can run here (no registry), so no node needs a runtime yet."""
    index = home_store(home).graphroot / "overlay-images" / "images.json"
    try:
        return index.stat().st_size > 2  # "[]" when emptied
    except OSError:
        return False


def home_store(home: Path) -> Store:
    """The image store of a local provider's home (one per SHOAL_HOME)."""
    return Store(home / "containers")


def node_store(home: Path, workdir: Path) -> Store:
    """A node's container store, in its working directory, reading the home's images."""
    return Store(workdir / "podman", images=home_store(home).graphroot)


def _toml(path: Path | None) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

"""What a local server runs: the built-in node server, or the image's own `command`.

An image without a `command` property runs `python -m shoal.providers.local.nodeserver`. An
image with one runs that command (split with shlex, never through a shell) after substituting
`{address}`, `{port}`, `{name}`, `{workdir}` and `{python}`. `health_path` (default `/health`)
is where readiness is polled; any answer below 500 counts.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import shoal
from shoal.model.inventory import Image
from shoal.providers.local.processes import ID_ENV, KEY_ENV

NODE_MODULE = "shoal.providers.local.nodeserver"
DEFAULT_HEALTH_PATH = "/health"


@dataclass(frozen=True, slots=True)
class NodePlace:
    """Where a server runs and what it is called: what its command may name."""

    name: str
    address: str
    port: int
    host: str
    zone: str


def node_argv(image: Image, place: NodePlace, *, workdir: Path, key: str) -> list[str]:
    """The argv for one server; raises ValueError for a command that cannot be parsed."""
    command = image.properties.get("command")
    name, address, port = place.name, place.address, place.port
    if not command:
        return [
            sys.executable,
            "-m",
            NODE_MODULE,
            "--name",
            name,
            "--address",
            address,
            "--port",
            str(port),
            "--workdir",
            str(workdir),
            "--node-id",
            key,
            "--host",
            place.host,
            "--zone",
            place.zone,
        ]
    values = {
        "{address}": address,
        "{port}": str(port),
        "{name}": name,
        "{workdir}": str(workdir),
        "{python}": sys.executable,
    }
    argv = shlex.split(command)
    if not argv:
        raise ValueError(f"image {image.name} has an empty command")
    out = []
    for arg in argv:
        for placeholder, value in values.items():
            arg = arg.replace(placeholder, value)
        out.append(arg)
    return out


def health_path(image: Image) -> str:
    return image.properties.get("health_path") or DEFAULT_HEALTH_PATH


def node_env(*, key: str, resource_id: str) -> dict[str, str]:
    """The parent's environment, with Shoal importable and the node's identity marked."""
    env = dict(os.environ)
    src_root = str(Path(shoal.__file__).resolve().parent.parent)
    parts = [src_root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    env["PYTHONUNBUFFERED"] = "1"
    env[KEY_ENV] = key
    env[ID_ENV] = resource_id
    return env

"""`shoal image import DIR|TAR [--name localhost/NAME:TAG]` (admin): a container image for
local nodes, imported once into the home's image store that every node reads.

No registry is needed: a root filesystem (a directory or a tar; give it a name) or an image
archive from `podman save` / `docker save` (it names its images). The path is sent as an
absolute path and read by the server, on the machine the local provider's nodes run on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote
from shoal.cli.errors import EXIT_OK
from shoal.cli.output import emit_data

app = typer.Typer(help="Container images for local nodes (admin): import.", no_args_is_help=True)


@app.command("import")
@remote()
async def import_image(
    s: Session,
    source: Annotated[
        Path, typer.Argument(help="A root filesystem directory or tar, or an image archive.")
    ],
    name: Annotated[
        str | None,
        typer.Option("--name", help="The image's name, e.g. localhost/web:1 (a root filesystem)."),
    ] = None,
) -> int:
    """Import an image into the local provider's image store (every node reads it)."""
    body: dict[str, Any] = {"path": str(source.expanduser().resolve())}
    if name is not None:
        body["name"] = name
    found: dict[str, Any] = await s.client.call("POST", "/v1/images", json=body)
    image = found.get("image") or {}
    if not s.table:
        emit_data(found, s.output)
    else:
        screen.out().print(f"imported {image.get('name')} ({image.get('id')})")
    return EXIT_OK

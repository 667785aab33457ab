"""`POST /v1/images` (admin): import a container image into the local provider's image store.

No registry is reachable from local nodes, so images come from files on the machine Shoal runs
on (`shoal image import DIR|TAR`): a root filesystem (directory or tar, given a name) or an
image archive from `podman save`/`docker save`. The path is read by the server, which is why
this is for admins only: the local provider's nodes run on the same machine anyway.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.model.problems import Problem
from shoal.providers.images import ImageRefusedError, ImageToolMissingError
from shoal.service.errors import Conflict, Forbidden, Invalid

router = APIRouter(
    prefix="/v1/images", tags=["images"], responses=schemas.ERRORS, route_class=schemas.ExactRoute
)


class ImportBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, max_length=4096)
    """An absolute path on the server's machine: a directory, a tar, or an image archive."""
    name: str | None = Field(None, max_length=255)
    """localhost/NAME:TAG for a root filesystem; an archive names its own images."""


class ImageOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    id: str


class ImportedImage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    image: ImageOut


@router.post("", status_code=201, response_model=ImportedImage)
async def import_image(request: Request, who: Caller, body: ImportBody) -> dict[str, Any]:
    if not who.is_admin:
        raise Forbidden("only an admin imports images")
    rt = runtime_of(request)
    images = rt.capabilities.images
    if images is None:
        raise Conflict(
            f"the {rt.provider.name} provider's images come from its cloud, not from Shoal",
            [Problem("", "images are imported on the local provider only")],
        )
    if not Path(body.path).is_absolute():
        raise Invalid("the path must be absolute", [Problem("/path", "not an absolute path")])
    try:
        imported = await images.import_image(Path(body.path), body.name)
    except ImageToolMissingError as e:
        raise Conflict(str(e)) from None
    except ImageRefusedError as e:
        at = f"/{e.field}"
        raise Invalid(f"the image was not imported: {e}", [Problem(at, str(e))]) from None
    return {"image": {"name": imported.name, "id": imported.id}}

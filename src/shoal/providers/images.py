"""Container images a provider takes from files on Shoal's machine (`shoal image import`).

Only the `local` provider has such a store (its nodes run on this machine and no registry is
reachable); a cloud's images come from the cloud. What the API needs to know of one: the
capability (`ImageImporter`), what an import gives back, and its failures as types, each
naming the field of the request it is about, so no caller reads an error's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable


class ImageField(StrEnum):
    """The part of an import request a refusal is about."""

    PATH = "path"
    NAME = "name"


class ImageRefusedError(Exception):
    """The image could not be imported from what was given (the message says why)."""

    def __init__(self, message: str, field: ImageField = ImageField.PATH) -> None:
        super().__init__(message)
        self.field = field


class ImageToolMissingError(Exception):
    """What imports images (podman) is not installed here; the message names the packages."""


@dataclass(frozen=True, slots=True)
class Imported:
    name: str
    id: str


@runtime_checkable
class ImageImporter(Protocol):
    async def import_image(self, source: Path, name: str | None) -> Imported:
        """Import a root filesystem (directory or tar, given `name`) or an image archive.
        Raises `ImageRefusedError` or `ImageToolMissingError`."""
        ...

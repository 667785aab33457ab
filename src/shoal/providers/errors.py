"""Provider outcomes that are not success, as Shoal's own exceptions.

`TemporaryError`: try again later (a timeout, a busy backend). `PermanentError`: retrying will not
help (no such image, quota). `ResourceGone`: the resource does not exist (any more).
"""

from __future__ import annotations


class ProviderError(Exception):
    """Base of every provider failure; `fault` keeps the backend's own words."""

    def __init__(self, message: str, *, fault: str | None = None) -> None:
        super().__init__(message)
        self.fault = fault


class TemporaryError(ProviderError):
    """Worth retrying after a delay."""


class PermanentError(ProviderError):
    """Not worth retrying: the request itself cannot succeed."""


class ResourceGone(ProviderError):
    """The resource does not exist."""

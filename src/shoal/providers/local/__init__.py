"""The `local` provider: nodes are real processes on their own loopback addresses.

`LocalProvider` is imported lazily, so the node server (`python -m
shoal.providers.local.nodeserver`) starts without loading the provider and asyncio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shoal.providers.local.provider import LocalProvider

__all__ = ["LocalProvider"]


def __getattr__(name: str) -> Any:
    if name == "LocalProvider":
        from shoal.providers.local.provider import LocalProvider

        return LocalProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Documents to the model: the native cluster format, the Nova vcluster seed, inventories.

Every loader reports all the problems of a document at once, as `shoal.model.InvalidDocument`
carrying `Problem(path, message)` items with JSON pointers, and raises nothing else for bad
input.

The loaders are imported when first named (PEP 562), not with the package: a client command
that only parses YAML within bounds (`documents/syntax.py`) must not load every reader
(issue 37; tests/cli/test_cli_light.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shoal.documents.loader import (
        cluster_from_tree,
        inventory_from_tree,
        load_cluster,
        load_cluster_file,
        load_inventory,
        load_inventory_file,
    )

__all__ = [
    "cluster_from_tree",
    "inventory_from_tree",
    "load_cluster",
    "load_cluster_file",
    "load_inventory",
    "load_inventory_file",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("shoal.documents.loader"), name)
    globals()[name] = value
    return value

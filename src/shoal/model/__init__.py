"""Core types of Shoal: profiles, node groups, groupings, inventories. Pure data, no I/O.

Every other layer speaks in these types, so they stay small, frozen and free of behaviour that
needs the outside world.

The re-exported types are imported when first named (PEP 562), not with the package: a module
that needs one leaf of the model (`model/problems.py` for a document's bounds in the CLI) must
not load every type (issue 37; tests/cli/test_cli_light.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shoal.model.cluster import ClusterSpec, Grouping, Instance, MemberRef, NodeGroup
    from shoal.model.enums import NodeKind, Objective, Rule, Scope
    from shoal.model.inventory import Flavor, Host, Image, Inventory
    from shoal.model.problems import InvalidDocument, Problem
    from shoal.model.profile import Profile, ServerProfile, VolumeProfile

__all__ = [
    "ClusterSpec",
    "Flavor",
    "Grouping",
    "Host",
    "Image",
    "Instance",
    "InvalidDocument",
    "Inventory",
    "MemberRef",
    "NodeGroup",
    "NodeKind",
    "Objective",
    "Problem",
    "Profile",
    "Rule",
    "Scope",
    "ServerProfile",
    "VolumeProfile",
]

_WHERE = {
    "ClusterSpec": "shoal.model.cluster",
    "Flavor": "shoal.model.inventory",
    "Grouping": "shoal.model.cluster",
    "Host": "shoal.model.inventory",
    "Image": "shoal.model.inventory",
    "Instance": "shoal.model.cluster",
    "InvalidDocument": "shoal.model.problems",
    "Inventory": "shoal.model.inventory",
    "MemberRef": "shoal.model.cluster",
    "NodeGroup": "shoal.model.cluster",
    "NodeKind": "shoal.model.enums",
    "Objective": "shoal.model.enums",
    "Problem": "shoal.model.problems",
    "Profile": "shoal.model.profile",
    "Rule": "shoal.model.enums",
    "Scope": "shoal.model.enums",
    "ServerProfile": "shoal.model.profile",
    "VolumeProfile": "shoal.model.profile",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

"""Core types of Shoal: profiles, node groups, groupings, inventories. Pure data, no I/O.

Every other layer speaks in these types, so they stay small, frozen and free of behaviour that
needs the outside world.
"""

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

"""Documents to the model: the native cluster format, the Nova vcluster seed, inventories.

Every loader reports all the problems of a document at once, as `shoal.model.InvalidDocument`
carrying `Problem(path, message)` items with JSON pointers, and raises nothing else for bad
input.
"""

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

"""A cluster's document read into its model once per generation.

The manager, the workload keeper and the network sync each read every settled cluster's
document every tick; reading it again only when its generation moved keeps a steady
installation's tick from re-parsing documents. A document that no longer reads (an inventory
change made it invalid) is cached as None, for the same generation.
"""

from __future__ import annotations

from shoal.documents import cluster_from_tree
from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument
from shoal.store.records import ClusterRecord


class SpecCache:
    def __init__(self, limit: int | None = None) -> None:
        self._specs: dict[str, tuple[int, ClusterSpec | None]] = {}
        self._limit = limit
        """Past this many clusters the cache starts again (None: it keeps every cluster)."""

    def get(self, cluster: ClusterRecord, inventory: Inventory) -> ClusterSpec | None:
        cached = self._specs.get(cluster.id)
        if cached is not None and cached[0] == cluster.generation:
            return cached[1]
        try:
            spec: ClusterSpec | None = cluster_from_tree(cluster.document, inventory)
        except InvalidDocument:
            spec = None
        if self._limit is not None and len(self._specs) > self._limit:
            self._specs.clear()
        self._specs[cluster.id] = (cluster.generation, spec)
        return spec

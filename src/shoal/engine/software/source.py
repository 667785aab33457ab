"""Where the deployer reads a cluster's software from: its stored document, read once per
generation (the document changes only with a new generation)."""

from __future__ import annotations

from collections.abc import Callable

from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument
from shoal.model.software import SoftwareSpec
from shoal.spec import cluster_from_tree
from shoal.store.records import ClusterRecord


class DocumentSoftware:
    """`SoftwareOf` over the stored documents, cached by (cluster, generation)."""

    def __init__(self, inventory: Callable[[], Inventory]) -> None:
        self._inventory = inventory
        self._cache: dict[str, tuple[int, SoftwareSpec | None]] = {}

    def __call__(self, cluster: ClusterRecord) -> SoftwareSpec | None:
        cached = self._cache.get(cluster.id)
        if cached is not None and cached[0] == cluster.generation:
            return cached[1]
        software: SoftwareSpec | None
        try:
            software = cluster_from_tree(cluster.document, self._inventory()).software
        except InvalidDocument:
            software = None
        self._cache[cluster.id] = (cluster.generation, software)
        return software

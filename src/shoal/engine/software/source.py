"""Where the deployer reads a cluster's software from: its stored document, read once per
generation (the document changes only with a new generation), with the addresses the document
gives its own ports, floating IPs and balancers filled in; and the node groups' update
policies, which roll config changes through in batches."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from shoal.documents import cluster_from_tree
from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.outputs import given_addresses
from shoal.model.policies import HealthPolicy, UpdatePolicy
from shoal.model.problems import InvalidDocument
from shoal.model.software import SoftwareSpec
from shoal.model.workloads import Workload
from shoal.store.records import ClusterRecord


class DocumentSoftware:
    """`SoftwareOf` over the stored documents, cached by (cluster, generation)."""

    def __init__(self, inventory: Callable[[], Inventory]) -> None:
        self._inventory = inventory
        self._cache: dict[str, tuple[int, ClusterSpec | None]] = {}

    def _spec(self, cluster: ClusterRecord) -> ClusterSpec | None:
        cached = self._cache.get(cluster.id)
        if cached is not None and cached[0] == cluster.generation:
            return cached[1]
        spec: ClusterSpec | None
        try:
            spec = cluster_from_tree(cluster.document, self._inventory())
        except InvalidDocument:
            spec = None
        if spec is not None:
            # Inputs naming an address the document gives take it as a literal; the ones the
            # cloud assigns wait for the recorded address (planning/software.py).
            spec = replace(spec, software=given_addresses(spec.software, spec.networking))
        self._cache[cluster.id] = (cluster.generation, spec)
        return spec

    def spec(self, cluster: ClusterRecord) -> ClusterSpec | None:
        """The cluster its stored document declares; None if it no longer reads."""
        return self._spec(cluster)

    def __call__(self, cluster: ClusterRecord) -> SoftwareSpec | None:
        spec = self._spec(cluster)
        return None if spec is None else spec.software

    def workloads(self, cluster: ClusterRecord) -> Sequence[Workload]:
        """`WorkloadsOf`: the workloads whose members deployments' inputs may read."""
        spec = self._spec(cluster)
        return () if spec is None else spec.workloads

    def update_policies(self, cluster: ClusterRecord) -> Mapping[str, UpdatePolicy]:
        """`PoliciesOf`: the node groups that declare an update policy."""
        spec = self._spec(cluster)
        if spec is None:
            return {}
        return {g.name: g.update for g in spec.node_groups if g.update is not None}

    def health_policies(self, cluster: ClusterRecord) -> Mapping[str, HealthPolicy]:
        """`HealthOf`: each node group's health policy, where it has one (the rollout's gate)."""
        spec = self._spec(cluster)
        if spec is None:
            return {}
        found = {g.name: spec.health_of(g.name) for g in spec.node_groups}
        return {name: h for name, h in found.items() if h is not None}

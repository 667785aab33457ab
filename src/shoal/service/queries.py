"""Read-only questions about clusters, nodes, actions and events, scoped to the caller."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from shoal.engine import workload_members
from shoal.engine.software.decide import RUNNABLE_NODE, facts_of
from shoal.engine.software.source import DocumentSoftware
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import ActionStatus
from shoal.model.heat_agent import STATUS_CODE, STDERR, STDOUT
from shoal.model.inventory import Inventory
from shoal.model.outputs import OutputResult
from shoal.model.problems import Problem
from shoal.model.software import DeploymentRecord, Json, NodeFacts
from shoal.planning.outputs import evaluate
from shoal.service.deployments import scrub
from shoal.service.errors import NotFound, ServiceError
from shoal.service.views import (
    ActionView,
    ClusterView,
    EventView,
    NodeGroupView,
    NodeView,
    OneAction,
    action_view,
    cluster_view,
    event_view,
    node_view,
)
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as deployment_repo
from shoal.store import events as event_repo
from shoal.store import network_addresses as address_repo
from shoal.store import nodes as node_repo
from shoal.store import topology as topology_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.deployments import Server
from shoal.store.records import ClusterRecord, NodeRecord, Principal
from shoal.store.topology import HostCount


@dataclass(frozen=True, slots=True)
class TopologyNodes:
    """The caller's nodes for the topology: counted per host and status (always, in SQL), and
    the nodes themselves only when there are at most the asked maximum (None above it)."""

    counts: list[HostCount]
    nodes: list[NodeView] | None

    @property
    def total(self) -> int:
        return sum(c.count for c in self.counts)


class Queries:
    def __init__(self, db: Database, inventory: Callable[[], Inventory] | None = None) -> None:
        self.db = db
        self._specs = DocumentSoftware(inventory) if inventory is not None else None
        """Stored documents read once per generation, for outputs (None: none are served)."""

    @staticmethod
    def _scope(who: Principal) -> str | None:
        return None if who.is_admin else who.project_id

    def _cluster(self, conn: Any, who: Principal, ref: str) -> ClusterRecord:
        c = cluster_repo.get_cluster(conn, ref, self._scope(who))
        if c is None:
            raise NotFound(f"no cluster {ref!r}")
        return c

    def clusters(self, who: Principal) -> list[ClusterView]:
        """Every cluster (the dashboard's pickers; the API answers `clusters_page`)."""
        with self.db.reading() as conn:
            return [cluster_view(c) for c in cluster_repo.list_clusters(conn, self._scope(who))]

    def clusters_page(
        self, who: Principal, limit: int, marker: str | None
    ) -> tuple[list[ClusterView], str | None]:
        """A page of clusters (`limit` checked by the caller) and the next page's marker."""
        with self.db.reading() as conn:
            got = cluster_repo.page_clusters(conn, self._scope(who), limit, marker)
        if got is None:
            raise _no_marker("cluster", marker)
        found, more = got
        return [cluster_view(c) for c in found], found[-1].id if more and found else None

    def cluster(self, who: Principal, ref: str, nodes: int = 0) -> ClusterView:
        """One cluster with its nodes counted in SQL, and its first `nodes` nodes when asked
        (0: none; at most a page, checked by the caller)."""
        with self.db.reading() as conn:
            c = self._cluster(conn, who, ref)
            first: tuple[list[NodeRecord], str | None] | None = None
            if nodes > 0:
                got = node_repo.page_nodes(
                    conn, cluster_id=c.id, project_id=None, limit=nodes, marker=None
                )
                assert got is not None  # no marker: always a page
                page, more = got
                first = (page, page[-1].id if more and page else None)
            return cluster_view(c, node_repo.tally_nodes(conn, c.id), first, self._outputs(conn, c))

    @staticmethod
    def _replicas(
        conn: Any, c: ClusterRecord, spec: ClusterSpec, servers: list[Server]
    ) -> list[NodeFacts]:
        """The READY replicas of the workloads an output lists with `{members: W}` (issue 22),
        as member facts: `ADDRESS:PORT` (engine/workload_members.py)."""
        named = workload_members.output_targets(o.value for o in spec.outputs)
        read = [w for w in spec.workloads if w.name in named]
        if not read:
            return []
        names = {w.name for w in read}
        rows = replica_repo.load(conn, [c.id])[c.id]
        live = {s.name for s in servers if s.status in RUNNABLE_NODE and s.provider_id}
        found = workload_members.replica_facts(
            read,
            (r for r in rows.values() if r.workload in names),
            {s.name: s for s in servers},
            live=live,
        )
        return [f for f in found if f.active]

    def _outputs(self, conn: Any, c: ClusterRecord) -> list[OutputResult]:
        """The cluster's outputs over its current servers and deployment records."""
        spec = self._specs.spec(c) if self._specs is not None else None
        if spec is None or not spec.outputs:
            return []
        servers = deployment_repo.current_servers(conn, c.id)
        nodes = [facts_of(s) for s in servers] + self._replicas(conn, c, spec, servers)
        records: list[DeploymentRecord] = []
        if spec.software.deployments:
            for row in deployment_repo.for_cluster(conn, c.id):
                heat: dict[str, Json] = {
                    STDOUT: row.stdout,
                    STDERR: row.stderr,
                    STATUS_CODE: row.status_code,
                }
                r = row.record()
                records.append(replace(r, outputs={**heat, **r.outputs}))
        assigned = address_repo.for_cluster(conn, c.id) if not spec.networking.empty else {}
        results = evaluate(spec.outputs, spec.software, nodes, records, spec.networking, assigned)
        if not spec.software.secrets:
            return results
        # a node may echo a secret into an output; shown here, it is scrubbed as logs are
        return [replace(r, value=_scrubbed(r.value, spec.software.secrets)) for r in results]

    def cluster_record(
        self, who: Principal, ref: str, *, include_deleted: bool = False
    ) -> ClusterRecord:
        with self.db.reading() as conn:
            c = cluster_repo.get_cluster(
                conn, ref, self._scope(who), include_deleted=include_deleted
            )
        if c is None:
            raise NotFound(f"no cluster {ref!r}")
        return c

    def nodegroups(self, who: Principal, ref: str) -> list[NodeGroupView]:
        with self.db.reading() as conn:
            c = self._cluster(conn, who, ref)
            return cluster_view(c, node_repo.tally_nodes(conn, c.id)).node_groups or []

    def nodegroup(self, who: Principal, ref: str, name: str) -> NodeGroupView:
        for g in self.nodegroups(who, ref):
            if g.name == name:
                return g
        raise NotFound(f"no node group {name!r} in cluster {ref!r}")

    def nodes(self, who: Principal, cluster: str | None) -> list[NodeView]:
        with self.db.reading() as conn:
            if cluster is not None:
                c = self._cluster(conn, who, cluster)
                return [node_view(n) for n in node_repo.list_nodes(conn, c.id)]
            return [node_view(n) for n in node_repo.list_project_nodes(conn, self._scope(who))]

    def topology_nodes(self, who: Principal, cluster: str | None, most: int) -> TopologyNodes:
        """Counts per host and status, and (if no more than `most`) the nodes, in one read."""
        with self.db.reading() as conn:
            cluster_id = self._cluster(conn, who, cluster).id if cluster is not None else None
            counts = topology_repo.count_by_host(
                conn, cluster_id=cluster_id, project_id=self._scope(who)
            )
            if sum(c.count for c in counts) > most:
                return TopologyNodes(counts, None)
            if cluster_id is not None:
                found = node_repo.list_nodes(conn, cluster_id)
            else:
                found = node_repo.list_project_nodes(conn, self._scope(who))
        return TopologyNodes(counts, [node_view(n) for n in found])

    def nodes_page(
        self, who: Principal, cluster: str | None, limit: int, marker: str | None
    ) -> tuple[list[NodeView], str | None]:
        """One page of nodes (issue 23), paged in SQL, and the marker of the next (None: last).
        `limit` is checked by the caller against MAX_PAGE."""
        with self.db.reading() as conn:
            cluster_id = self._cluster(conn, who, cluster).id if cluster is not None else None
            got = node_repo.page_nodes(
                conn,
                cluster_id=cluster_id,
                project_id=self._scope(who),
                limit=limit,
                marker=marker,
            )
        if got is None:
            raise _no_marker("node", marker)
        found, more = got
        return [node_view(n) for n in found], found[-1].id if more and found else None

    def node(self, who: Principal, node_id: str) -> NodeView:
        with self.db.reading() as conn:
            n = node_repo.get_node(conn, node_id, self._scope(who))
        if n is None:
            raise NotFound(f"no node {node_id!r}")
        return node_view(n)

    def actions(
        self,
        who: Principal,
        cluster: str | None,
        everything: bool,
        limit: int = 1000,
        marker: str | None = None,
    ) -> tuple[list[ActionView], str | None]:
        """A page of actions, oldest first (`limit` checked by the caller), and the next
        page's marker (None: the last page)."""
        with self.db.reading() as conn:
            cluster_id = self._cluster(conn, who, cluster).id if cluster else None
            got = action_repo.page_actions(
                conn,
                self._scope(who),
                cluster_id=cluster_id,
                top_level=not everything,
                limit=limit,
                marker=marker,
            )
        if got is None:
            raise _no_marker("action", marker)
        found, more = got
        return [action_view(a) for a in found], found[-1].id if more and found else None

    def action(self, who: Principal, action_id: str) -> OneAction:
        with self.db.reading() as conn:
            a = action_repo.get_action(conn, action_id, self._scope(who))
            if a is None:
                raise NotFound(f"no action {action_id!r}")
            counts: Counter[ActionStatus] = action_repo.child_counts(conn, a.id)
        return OneAction(action=action_view(a), children={str(k): v for k, v in counts.items()})

    def newest_event_id(self) -> int:
        """The newest event's id of any project (a watermark, never shown to a caller)."""
        with self.db.reading() as conn:
            return event_repo.newest_id(conn)

    def events(
        self, who: Principal, cluster: str | None, after: int, limit: int
    ) -> list[EventView]:
        with self.db.reading() as conn:
            cluster_id = None
            if cluster is not None:
                c = cluster_repo.get_cluster(conn, cluster, self._scope(who), include_deleted=True)
                if c is None:
                    raise NotFound(f"no cluster {cluster!r}")
                cluster_id = c.id
            found = event_repo.list_events(
                conn, self._scope(who), cluster_id=cluster_id, after_id=after, limit=limit
            )
            return [event_view(e) for e in found]


def _no_marker(kind: str, marker: str | None) -> ServiceError:
    return ServiceError(
        f"no {kind} {marker!r} in this list to page from",
        [Problem("query:marker", f"names no {kind} of this list")],
    )


def _scrubbed(value: Json, secrets: Mapping[str, str]) -> Json:
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    return value

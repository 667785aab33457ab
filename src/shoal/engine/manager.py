"""Active management: health checks and drift repair, level-triggered.

Management is partitioned (issue 23): cluster ids hash into `store/engines.PARTITIONS` ranges,
each a lease, and every engine holds its fair share of them (`engines.balance`), so health
checks, repairs and reconciles divide over the live engines, an engine's death moves only its
share, and a new engine takes one. The "manager" lease remains, held by one engine at a time,
only to say which engine exports installation-wide gauges (`engine/metrics.py`).

Every tick an engine looks at every settled cluster of its partitions and compares
what is declared and recorded with what the provider reports and what probes answer:
- a node whose resource is gone or broken behind Shoal's back is recreated in place; one whose
  host is gone is replaced on another host (placed again under every grouping rule);
- a node failing its health check `failures` times in a row (after its grace period) is
  unhealthy and recovered as its policy says (reboot, rebuild, replace, or left alone);
- when more of a node group than `max_unhealthy` is in trouble at once, Shoal stops remediating
  that group and raises a cluster warning instead of churning (a short circuit);
- resources Shoal made but no longer tracks are reported (and deleted if the cluster says so).
Each repair is a CLUSTER_RECOVER action with events, like any other change. A repair that does
not change what it found (the same node found in the same trouble afterwards) is tried again
after a doubling wait, and after `repair_attempts` tries it is reported instead (cluster
WARNING with the reason, an event) and left alone until the node or the document changes; the
count lives in the store (`store/repairs.py`), so a restart does not start the loop over.
Time comes from the engine's clock, so tests drive intervals and grace periods without sleeping.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace

import httpx

from shoal.engine.attention import Attention
from shoal.engine.context import EngineContext
from shoal.engine.contracts import Repair, RepairHow
from shoal.engine.events import cluster_event, node_record_event
from shoal.engine.fairness import STEP_S, in_turn
from shoal.engine.networks import NetworkSync
from shoal.engine.probes import probe
from shoal.engine.settle import current_nodes, declared_nodes, settled_status
from shoal.engine.spec_cache import SpecCache
from shoal.engine.submit import submit_recover
from shoal.engine.workloads import WorkloadKeeper
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import ClusterStatus, Health, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.policies import HealthPolicy, StrayHandling
from shoal.model.restarts import CONTAINER_LOOPS, ContainerLoop, loops_of
from shoal.providers.base import Resource, ResourceState
from shoal.providers.errors import ProviderError
from shoal.store import clusters as cluster_repo
from shoal.store import container_loops as loop_repo
from shoal.store import engines as engine_repo
from shoal.store import leases
from shoal.store import nodes as node_repo
from shoal.store import repairs as repair_repo
from shoal.store.events import NewEvent, add_events
from shoal.store.records import ClusterRecord, NodeChange, NodeRecord
from shoal.store.repairs import RepairAttempt
from shoal.telemetry import metrics

log = logging.getLogger("shoal.manager")

LEASE = "manager"
# Backoff between two submissions of the same repair: doubling from 5 s up to 5 minutes, and
# after this many that changed nothing, a report instead of another try.
REPAIR_BACKOFF_S = 5.0
REPAIR_BACKOFF_MAX_S = 300.0
REPAIR_ATTEMPTS = 5
# Converging a cluster that lacks declared nodes (or holds never-made ones): this many
# attempts, doubling the wait from CONVERGE_BACKOFF_S, then ERROR with the reason.
CONVERGE_ATTEMPTS = 4
CONVERGE_BACKOFF_S = 5.0
# An empty, settled cluster is reconciled (for strays) this many times less often: once in
# 15 minutes at the default interval, so even thousands of them cost a few provider lists a second.
QUIET_RECONCILES = 180
SWEEP_S = 30.0
"""How often the per-node books (checks, grace, failures) drop the nodes no longer there."""
_SETTLED = (ClusterStatus.ACTIVE, ClusterStatus.WARNING, ClusterStatus.ERROR)
_WATCHED = (NodeStatus.ACTIVE, NodeStatus.WARNING, NodeStatus.ERROR)


@dataclass(slots=True)
class _Trouble:
    how: RepairHow
    why: str


@dataclass(slots=True)
class _Writes:
    updates: list[NodeChange] = field(default_factory=list)
    events: list[NewEvent] = field(default_factory=list)
    statuses: list[tuple[ClusterRecord, ClusterStatus, str]] = field(default_factory=list)
    repairs: list[tuple[ClusterRecord, list[Repair], list[str]]] = field(default_factory=list)
    converge: list[tuple[ClusterRecord, list[Repair]]] = field(default_factory=list)
    attempts: list[RepairAttempt] = field(default_factory=list)
    forget: list[str] = field(default_factory=list)
    loops: list[tuple[NodeRecord, list[ContainerLoop]]] = field(default_factory=list)
    """Nodes whose containers that keep exiting changed (issue 36: store/container_loops.py)."""

    def count(self) -> int:
        """How much is to be written: a look that adds nothing was calm (issue 37)."""
        return (
            len(self.loops)
            + len(self.updates)
            + len(self.events)
            + len(self.statuses)
            + len(self.repairs)
            + len(self.converge)
            + len(self.attempts)
        )


@dataclass(slots=True)
class _Converging:
    """Attempts to converge one generation of a cluster's document."""

    generation: int
    attempts: int = 0
    not_before: float = 0.0


def _runs_again(n: NodeRecord, r: Resource) -> bool:
    """A node ERROR by a failed action (a delete that crashed on a full disk, then declared
    again) whose resource runs, and no health check found wanting: as good as its resource.
    Issue 39, item 4: nothing else made it ACTIVE, so its cluster stayed WARNING."""
    return (
        n.status is NodeStatus.ERROR
        and r.state is ResourceState.ACTIVE
        and n.health != Health.UNHEALTHY
    )


class Manager:
    """Health checks and reconciliation for one engine (active while it holds the lease)."""

    def __init__(
        self,
        ctx: EngineContext,
        *,
        tick_s: float = 1.0,
        reconcile_s: float = 5.0,
        lease_s: float = 15.0,
        probe_concurrency: int = 200,
        converge_attempts: int = CONVERGE_ATTEMPTS,
        converge_backoff_s: float = CONVERGE_BACKOFF_S,
        repair_attempts: int = REPAIR_ATTEMPTS,
        repair_backoff_s: float = REPAIR_BACKOFF_S,
        repair_backoff_max_s: float = REPAIR_BACKOFF_MAX_S,
    ) -> None:
        self.ctx = ctx
        self.tick_s = tick_s
        self.reconcile_s = reconcile_s
        self.lease_s = lease_s
        self._probes = asyncio.Semaphore(probe_concurrency)
        self._failures: dict[str, int] = {}
        self._next_check: dict[str, float] = {}
        self._first_seen: dict[str, float] = {}
        self._reconciled_at: dict[str, float] = {}
        self._strays_seen: set[str] = set()
        self._restarts_seen: dict[str, int] = {}
        self._loops_seen: dict[str, list[ContainerLoop]] = {}
        """Per node, the containers that keep exiting as last written (`_container_loops`)."""
        """Node id -> container restarts its server reported when last looked at."""
        self._short: set[tuple[str, str]] = set()
        self._specs = SpecCache()
        self._clusters = cluster_repo.ClusterCache()
        self._nodes = node_repo.NodeCache()
        self._cluster_of: dict[str, str] = {}
        # Per node, repairs that did not change what they found (read from the store each tick).
        self._attempts: dict[str, RepairAttempt] = {}
        self.repair_attempts = repair_attempts
        self.repair_backoff_s = repair_backoff_s
        self.repair_backoff_max_s = repair_backoff_max_s
        self._client: httpx.AsyncClient | None = None
        self.converge_attempts = converge_attempts
        self.converge_backoff_s = converge_backoff_s
        self._converging: dict[str, _Converging] = {}
        self.networks = NetworkSync(ctx.provider, db=ctx.db, owner=ctx.owner, clock=ctx.clock)
        """Security groups and load balancers kept in step with the servers (issue 26)."""
        self.partitions: frozenset[int] = frozenset()
        """The management partitions this engine holds (as of its last balance)."""
        self._balanced_at = -1e18
        self._held = False
        self._partition: dict[str, int] = {}
        self._declared: dict[str, tuple[int, int]] = {}
        """Cluster id -> (generation, nodes its document declares): counting walks the document,
        and an idle tick must not do that for every cluster (issue 29)."""
        self.workloads = WorkloadKeeper(ctx)  # issue 22: replicas run and kept (workloads.py)
        self.attention = Attention(ctx.provider, tick_s=tick_s)
        """Which settled clusters a tick looks at (issue 37: engine/attention.py)."""
        self._swept_at = -1e18

    async def close(self) -> None:
        """Stop managing: close the probe client and hand the leases on at once."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        ctx = self.ctx
        await ctx.run_in_thread(leases.release, ctx.db, LEASE, ctx.owner)
        await ctx.run_in_thread(engine_repo.release_partitions, ctx.db, ctx.owner)
        self.partitions = frozenset()

    async def balance(self, now: float) -> frozenset[int]:
        """Renew this engine's partitions and move toward its fair share (every lease_s / 6:
        renewing is a write, and idle engines should not write every tick)."""
        ctx = self.ctx
        if now - self._balanced_at < self.lease_s / 6:
            return self.partitions
        self._balanced_at = now
        before = self.partitions
        self.partitions = await ctx.run_in_thread(
            engine_repo.balance, ctx.db, ctx.owner, now, self.lease_s
        )
        if self.partitions - before:
            metrics.MANAGER_LEASE_ACQUIRED.inc()  # issue 27: a start, a takeover, a share
        held = await ctx.run_in_thread(leases.acquire, ctx.db, LEASE, ctx.owner, now, self.lease_s)
        self._held = held
        return self.partitions

    def mine(self, cluster_id: str) -> bool:
        k = self._partition.get(cluster_id)
        if k is None:
            k = self._partition[cluster_id] = engine_repo.partition_of(cluster_id)
        return k in self.partitions

    def _declared_nodes(self, cluster: ClusterRecord) -> int:
        got = self._declared.get(cluster.id)
        if got is None or got[0] != cluster.generation:
            got = self._declared[cluster.id] = (
                cluster.generation,
                declared_nodes(cluster.document),
            )
        return got[1]

    async def tick(self) -> None:
        """One pass over the settled clusters of this engine's partitions."""
        ctx = self.ctx
        now = ctx.clock.now()
        if not await self.balance(now):
            return
        if self._client is None:
            self._client = httpx.AsyncClient(trust_env=False)
        await self.attention.poll()
        clusters, busy, self._attempts = await ctx.run_in_thread(self._load)
        await self._follow_busy(busy, now)
        if not clusters:
            # The last cluster's networking goes with it.
            await self.networks.forget(set(self._clusters.rows), self.mine, now)
            return
        inventory = await ctx.refresh_inventory()
        self.attention.hosts(inventory.host_names())
        writes = _Writes()
        seen: set[str] = set()
        for cluster, nodes in clusters:
            if not nodes and self._quiet(cluster, now):
                continue
            seen.update(n.id for n in nodes)
            self._cluster_of.update((n.id, cluster.id) for n in nodes)
            before = writes.count()
            try:
                async with asyncio.timeout(ctx.manage_limit_s):
                    await self._manage(cluster, nodes, inventory, now, writes)
            except Exception:
                log.exception("managing cluster %s failed; trying again next tick", cluster.name)
            self._attended(cluster, nodes, inventory, now, calm=writes.count() == before)
        if now - self._swept_at >= SWEEP_S:
            # Issue 37: the per-node books of nodes gone, swept now and then, not every tick
            # (a walk over every node's entries). A busy cluster is not managed this tick, nor
            # a calm one looked at (engine/attention.py), but their nodes keep their checks
            # and grace.
            self._swept_at = now
            kept = seen | set(self.attention.skipped())
            kept.update(k for k, c in self._cluster_of.items() if c in busy)
            for d in (
                self._failures,
                self._next_check,
                self._first_seen,
                self._cluster_of,
                self._loops_seen,
            ):
                for k in [k for k in d if k not in kept]:
                    del d[k]
        known = {c.id for c, _ in clusters} | busy
        for cid in [c for c in self._converging if c not in known]:
            del self._converging[cid]
        await self.networks.forget(set(self._clusters.rows), self.mine, now)
        # Entries of gone clusters: dropped all at once now and then, and rebuilt lazily.
        if len(self._declared) > 2 * len(known) + 1000:
            self._declared.clear()
        if len(self._partition) > 2 * len(self._clusters.rows) + 1000:
            self._partition.clear()
        writes.forget.extend(
            a.node_id
            for a in self._attempts.values()
            if a.node_id not in seen and a.cluster_id not in busy
        )
        await ctx.run_in_thread(self._write, writes, now)
        self.attention.settle(c for c in self._clusters.rows if self.mine(c))
        await self.workloads.tick(clusters, inventory)

    async def _follow_busy(self, busy: set[str], now: float) -> None:
        """The networking of busy clusters whose servers the node work changed since the last
        tick (issue 26: a pool follows a scale-out's new servers before the action ends).
        Only marked clusters (at most `member_marks.PER_TICK` a tick) with networking have
        their nodes read; every other busy cluster costs nothing, as before."""
        marked = self.ctx.members.take()
        if self.networks.driver is None or not marked:
            return
        inventory = await self.ctx.inventory()
        wanted: list[tuple[ClusterRecord, ClusterSpec]] = []
        for cid in marked:
            row = self._clusters.rows.get(cid)
            if cid not in busy or row is None or not self.mine(cid):
                continue  # settled: the tick's own pass syncs it
            spec = self._spec(row[1], inventory)
            if spec is not None and not spec.networking.empty:
                wanted.append((row[1], spec))
        if not wanted:
            return

        def read() -> dict[str, list[NodeRecord]]:
            with self.ctx.db.reading() as conn:
                return node_repo.live_nodes_by_cluster(conn, [c.id for c, _ in wanted])

        nodes = await self.ctx.run_in_thread(read)
        writes = _Writes()
        for cluster, spec in wanted:
            failed = await self.networks.sync(cluster, spec, nodes.get(cluster.id, []), now)
            if failed is not None:
                writes.events.append(cluster_event(cluster, cluster.status, failed, level="ERROR"))
        await self.ctx.run_in_thread(self._write, writes, now)

    # -- reading -------------------------------------------------------------------------------

    def _load(
        self,
    ) -> tuple[list[tuple[ClusterRecord, list[NodeRecord]]], set[str], dict[str, RepairAttempt]]:
        """Settled clusters with their nodes, the ids of the busy ones, and repair attempts."""
        with self.ctx.db.reading() as conn:
            found = [
                c
                for c in cluster_repo.list_clusters_cached(conn, self._clusters)
                if self.mine(c.id)
            ]
            if not found:  # nothing of this engine's: no repair to read (issue 23: idle ticks)
                self._nodes.rows.clear()
                return [], set(), {}
            busy = {c.id for c in found if c.status not in _SETTLED}
            attempts = {k: a for k, a in repair_repo.load(conn).items() if self.mine(a.cluster_id)}
            # Issue 37: only the clusters that changed or are due (engine/attention.py).
            troubled = {a.cluster_id for a in attempts.values()} | set(self._converging)
            now = self.ctx.clock.now()
            settled = [
                c for c in found if c.status in _SETTLED and self.attention.wants(c, now, troubled)
            ]
            # This engine's partitions' nodes only, not the installation's.
            nodes = node_repo.live_nodes_by_cluster_cached(
                conn, [c.id for c in settled], self._nodes
            )
            return [(c, nodes.get(c.id, [])) for c in settled], busy, attempts

    def _attended(
        self,
        cluster: ClusterRecord,
        nodes: list[NodeRecord],
        inventory: Inventory,
        now: float,
        *,
        calm: bool,
    ) -> None:
        """Tell `attention` what this look found (issue 37): calm when it wrote nothing and
        nothing of the cluster waits on a timer of the manager's."""
        spec = self._spec(cluster, inventory)
        calm = (
            calm
            and spec is not None
            and not spec.workloads
            and spec.networking.empty
            and cluster.id not in self._converging
            and not any(a.cluster_id == cluster.id for a in self._attempts.values())
            and not any(self._failures.get(n.id) for n in nodes)
        )
        listed = self._reconciled_at.get(cluster.id) == now
        self.attention.looked(cluster, spec, nodes, calm=calm, listed=listed, now=now)

    def _quiet(self, cluster: ClusterRecord, now: float) -> bool:
        """An empty cluster that declares no nodes and already says so has nothing to check
        but strays: it is looked at every QUIET_RECONCILES reconciles, not every tick (3,000
        empty clusters kept an idle server at 75-94 % of a core)."""
        if (
            cluster.status is not ClusterStatus.ACTIVE
            or cluster.lock_action_id is not None
            or cluster.id in self._converging
            or self._declared_nodes(cluster)
        ):
            return False
        last = self._reconciled_at.get(cluster.id)
        return last is not None and now - last < self.reconcile_s * QUIET_RECONCILES

    def _spec(self, cluster: ClusterRecord, inventory: Inventory) -> ClusterSpec | None:
        return self._specs.get(cluster, inventory)

    # -- one cluster ---------------------------------------------------------------------------

    async def _manage(
        self,
        cluster: ClusterRecord,
        nodes: list[NodeRecord],
        inventory: Inventory,
        now: float,
        writes: _Writes,
    ) -> None:
        spec = self._spec(cluster, inventory)
        if spec is None:
            return
        if self._converge(cluster, nodes, now, writes):
            return
        failed = await self.networks.sync(cluster, spec, nodes, now)
        if failed is not None:
            writes.events.append(cluster_event(cluster, cluster.status, failed, level="ERROR"))
        trouble: dict[str, _Trouble] = {}
        # A lost host is seen every tick (from the inventory, no provider call), so a health
        # check never takes its nodes for sick ones to reboot or rebuild in place.
        hosts = inventory.host_names()
        for n in nodes:
            if n.status in _WATCHED and n.provider_id is not None and n.host not in hosts:
                trouble[n.name] = _Trouble(RepairHow.REPLACE, f"host {n.host} is gone")
        reconciled = now - self._reconciled_at.get(cluster.id, -1e18) >= self.reconcile_s
        if reconciled:
            self._reconciled_at[cluster.id] = now
            await self._reconcile(cluster, spec, nodes, trouble, writes)
        await self._check_health(spec, nodes, now, trouble, writes)
        if reconciled:
            # Found well by a full look (the provider, and no failing check): its repairs worked.
            for n in nodes:
                if (
                    n.id in self._attempts
                    and n.name not in trouble
                    and not self._failures.get(n.id)
                ):
                    del self._attempts[n.id]
                    writes.forget.append(n.id)
        self._remediate(cluster, spec, nodes, trouble, now, writes)

    def _converge(
        self, cluster: ClusterRecord, nodes: list[NodeRecord], now: float, writes: _Writes
    ) -> bool:
        """Level triggering for what an action left undone: declared nodes that do not exist,
        and nodes never made (INIT) or whose creation failed (ERROR with no resource).

        Each attempt is a CLUSTER_RECOVER (its plan creates what is missing); attempts are
        bounded and spaced on the engine's clock, and then the cluster is ERROR with the
        reason. True when the cluster differs from its document this way (nothing else is
        done to it this tick).
        """
        live = current_nodes(nodes)
        declared = self._declared_nodes(cluster)
        missing = max(0, declared - len(live))
        unmade = [
            n
            for n in live
            if n.status is NodeStatus.INIT
            or (n.status is NodeStatus.ERROR and n.provider_id is None)
        ]
        if not missing and not unmade:
            self._converging.pop(cluster.id, None)
            return False
        state = self._converging.get(cluster.id)
        if state is None or state.generation != cluster.generation:
            state = self._converging[cluster.id] = _Converging(cluster.generation)
        _, explanation = settled_status(nodes, declared)
        if state.attempts >= self.converge_attempts:
            gave_up = f"gave up converging after {state.attempts} attempt(s): {explanation}" + (
                f"; last: {cluster.status_reason}" if cluster.status_reason else ""
            )
            if cluster.lock_action_id is None and not cluster.status_reason.startswith(
                "gave up converging"
            ):
                writes.statuses.append((cluster, ClusterStatus.ERROR, gave_up))
                writes.events.append(
                    cluster_event(cluster, ClusterStatus.ERROR, gave_up, level="ERROR")
                )
            return True
        if cluster.lock_action_id is not None or now < state.not_before:
            return True
        repairs = [Repair(n.name, RepairHow.RECREATE, f"{n.status}, never made") for n in unmade]
        if missing:
            repairs.append(Repair.missing(missing))
        writes.converge.append((cluster, repairs))
        return True

    async def _reconcile(
        self,
        cluster: ClusterRecord,
        spec: ClusterSpec,
        nodes: list[NodeRecord],
        trouble: dict[str, _Trouble],
        writes: _Writes,
    ) -> None:
        try:
            resources = await self.ctx.provider.list_resources(cluster.id)
        except ProviderError as e:
            log.warning("cannot list %s's resources: %s", cluster.name, e)
            return
        by_key: dict[str, Resource] = {r.key: r for r in resources}
        by_id: dict[str, Resource] = {r.id: r for r in resources}
        elsewhere = await self._listed_elsewhere(nodes, by_id, by_key, trouble)
        for n in nodes:
            if n.status not in _WATCHED or n.provider_id is None or n.name in trouble:
                continue  # (a node whose host is gone is already in trouble)
            listed = by_id.get(n.provider_id) or by_key.get(n.id)
            if listed is not None:
                self._container_restarts(n, listed, writes)
                self._container_loops(n, listed, writes)
            r = listed or elsewhere.get(n.provider_id)
            if r is None or r.state in (ResourceState.MISSING, ResourceState.ERROR):
                state = "gone" if r is None or r.state is ResourceState.MISSING else "broken"
                trouble[n.name] = _Trouble(
                    RepairHow.RECREATE, f"its {n.kind} is {state} at the provider"
                )
            elif _runs_again(n, r):
                writes.updates.append(NodeChange(n.id, status=NodeStatus.ACTIVE, status_reason=""))
                writes.events.append(
                    node_record_event(
                        n, "ACTIVE", f"its {n.kind} runs at the provider (was: {n.status_reason})"
                    )
                )
        if cluster.lock_action_id is None:
            await self._drop_duplicates(cluster, nodes, resources, by_id, writes)
        live = {n.id for n in nodes}
        for r in resources:
            if r.key in live or r.id in self._strays_seen:
                continue
            self._strays_seen.add(r.id)
            delete = spec.strays is StrayHandling.DELETE
            writes.events.append(
                cluster_event(
                    cluster,
                    "STRAY",
                    f"{r.kind} {r.name} ({r.id}) belongs to no node"
                    + ("; deleting it" if delete else "; reported, not touched"),
                    level="WARNING",
                )
            )
            if delete:
                try:
                    await self.ctx.provider.delete(r.kind, r.id)
                except ProviderError as e:
                    log.warning("could not delete stray %s: %s", r.id, e)

    def _container_restarts(self, n: NodeRecord, r: Resource, writes: _Writes) -> None:
        """A container on the node died behind Shoal's back and its restart policy started it
        again (docs/containers.md): said as an event on the node, once per restart seen."""
        count = int(r.details.get("container_restarts") or 0)
        before = self._restarts_seen.get(n.id)
        self._restarts_seen[n.id] = count
        if before is None or count <= before:
            return  # first look (a restart of Shoal is not news) or nothing new
        name = r.details.get("container_restarted", "")
        writes.events.append(
            node_record_event(
                n,
                "CONTAINER_RESTARTED",
                f"container {name} died and was restarted by its restart policy "
                f"({count - before} new, {count} on this server)",
                level="WARNING",
            )
        )

    def _container_loops(self, n: NodeRecord, r: Resource, writes: _Writes) -> None:
        """Containers of the node's deployments that keep exiting (the provider backs them
        off: providers/local/crashloops.py): kept per node for the deployment views, written
        when they change (not each look: their back-off times do not move between exits), and
        a WARNING event for each container that begins such a streak."""
        loops = loops_of(r.details.get(CONTAINER_LOOPS))
        before = self._loops_seen.get(n.id, [])
        if loops == before:
            return
        self._loops_seen[n.id] = loops
        writes.loops.append((n, loops))
        known = {x.container for x in before}
        for x in loops:
            if x.container in known:
                continue
            output = x.output.strip().splitlines()[-1:] if x.output.strip() else []
            writes.events.append(
                node_record_event(
                    n,
                    "CONTAINER_LOOP",
                    f"container {x.container} keeps exiting ({x.exits} exits in a row, last "
                    f"code {x.exit_code}); restarts now back off"
                    + (f": {output[0][:200]}" if output else ""),
                    level="WARNING",
                )
            )

    async def _listed_elsewhere(
        self,
        nodes: list[NodeRecord],
        by_id: dict[str, Resource],
        by_key: dict[str, Resource],
        trouble: dict[str, _Trouble],
    ) -> dict[str, Resource]:
        """Resources of watched nodes the cluster's listing lacks, asked for one by one.

        A backend groups resources by the cluster they were made for; a node made elsewhere and
        adopted later (Senlin's `add_nodes` of a standalone node) is listed under its old
        grouping, so missing from the cluster's list does not mean gone. Asking by id tells:
        without this, such a node was "recreated" (found again by its key) every reconcile.
        """
        unlisted = [
            n
            for n in nodes
            if n.status in _WATCHED
            and n.provider_id is not None
            and n.name not in trouble
            and n.provider_id not in by_id
            and n.id not in by_key
        ]
        found: dict[str, Resource] = {}
        for n in unlisted:
            assert n.provider_id is not None
            try:
                r = await self.ctx.provider.get(n.kind, n.provider_id)
            except ProviderError as e:
                log.warning("cannot read %s's resource %s: %s", n.name, n.provider_id, e)
                # Unknown is not gone: judge it on a later reconcile.
                r = Resource(n.provider_id, n.id, n.kind, n.name, ResourceState.ACTIVE)
            if r.state is not ResourceState.MISSING:
                found[n.provider_id] = r
        return found

    async def _drop_duplicates(
        self,
        cluster: ClusterRecord,
        nodes: list[NodeRecord],
        resources: list[Resource],
        by_id: dict[str, Resource],
        writes: _Writes,
    ) -> None:
        """Delete a second resource made for a node that already has its own.

        A real cloud makes one per create call; an engine whose claim ran out while its create
        was in flight (a stall, not a crash) may have made one the node never recorded. It
        carries the node's key, so it is no stray, and nothing else would ever remove it.
        """
        recorded = {
            n.id: n.provider_id
            for n in nodes
            if n.status is NodeStatus.ACTIVE and n.provider_id is not None
        }
        for r in resources:
            mine = recorded.get(r.key)
            if mine is None or r.id == mine or mine not in by_id:
                continue
            if r.state is ResourceState.BUILDING:
                continue  # settle first; a later pass decides
            writes.events.append(
                cluster_event(
                    cluster,
                    "DUPLICATE",
                    f"{r.kind} {r.name} ({r.id}) duplicates the node's own {mine}; deleting it",
                    level="WARNING",
                )
            )
            try:
                await self.ctx.provider.delete(r.kind, r.id)
            except ProviderError as e:
                log.warning("could not delete duplicate %s: %s", r.id, e)

    async def _check_health(
        self,
        spec: ClusterSpec,
        nodes: list[NodeRecord],
        now: float,
        trouble: dict[str, _Trouble],
        writes: _Writes,
    ) -> None:
        if spec.health is None and all(g.health is None for g in spec.node_groups):
            return  # no node has a policy (issue 23: not a look at each of 100,000 every tick)
        policies: dict[str, HealthPolicy | None] = {}
        due: list[tuple[NodeRecord, HealthPolicy]] = []
        for n in nodes:
            if n.status not in _WATCHED or n.provider_id is None or n.name in trouble:
                continue
            if n.group_name in policies:
                policy = policies[n.group_name]
            else:
                policy = policies[n.group_name] = spec.health_of(n.group_name)
            if policy is None:
                continue
            first = self._first_seen.setdefault(n.id, now)
            if now - first < policy.grace_s or self._next_check.get(n.id, now) > now:
                continue
            due.append((n, policy))
        if not due:
            return
        assert self._client is not None
        client = self._client

        async def one(n: NodeRecord, policy: HealthPolicy) -> str | None:
            async with self._probes:
                return await probe(n, policy, self.ctx.provider, client)

        answers = await asyncio.gather(*(one(n, p) for n, p in due))
        for (n, policy), reason in zip(due, answers, strict=True):
            metrics.HEALTH_CHECKS.labels("pass" if reason is None else "fail").inc()
            self._next_check[n.id] = now + policy.interval_s
            self._judge(n, policy, reason, now, trouble, writes)

    def _judge(
        self,
        n: NodeRecord,
        policy: HealthPolicy,
        reason: str | None,
        now: float,
        trouble: dict[str, _Trouble],
        writes: _Writes,
    ) -> None:
        if reason is None:
            self._failures.pop(n.id, None)
            if n.health != Health.HEALTHY or n.status is not NodeStatus.ACTIVE:
                writes.updates.append(
                    NodeChange(
                        n.id,
                        health=Health.HEALTHY,
                        health_reason="",
                        status=NodeStatus.ACTIVE,
                        status_reason="",
                        checked_at=now,
                    )
                )
                writes.events.append(node_record_event(n, "HEALTHY", "health check passes"))
            return
        count = self._failures.get(n.id, 0) + 1
        self._failures[n.id] = count
        if count < policy.failures:
            if n.status is not NodeStatus.WARNING:
                writes.updates.append(
                    NodeChange(
                        n.id, status=NodeStatus.WARNING, health_reason=reason, checked_at=now
                    )
                )
                writes.events.append(
                    node_record_event(
                        n,
                        "WARNING",
                        f"check failed ({count}/{policy.failures}): {reason}",
                        level="WARNING",
                    )
                )
            return
        if n.health != Health.UNHEALTHY:
            writes.updates.append(
                NodeChange(
                    n.id,
                    health=Health.UNHEALTHY,
                    health_reason=reason,
                    status=NodeStatus.ERROR,
                    status_reason=f"unhealthy: {reason}",
                    checked_at=now,
                )
            )
            writes.events.append(
                node_record_event(n, "UNHEALTHY", f"{count} checks failed: {reason}", level="ERROR")
            )
        how = RepairHow.of_policy(policy.recovery)
        if how is not None:
            trouble[n.name] = _Trouble(how.fitted(n.kind, made=True), f"unhealthy: {reason}")

    def _remediate(
        self,
        cluster: ClusterRecord,
        spec: ClusterSpec,
        nodes: list[NodeRecord],
        trouble: dict[str, _Trouble],
        now: float,
        writes: _Writes,
    ) -> None:
        if not trouble:
            for key in [k for k in self._short if k[0] == cluster.id]:
                self._short.discard(key)
            settled, why = settled_status(nodes, self._declared_nodes(cluster))
            gave_up = self._gave_up(cluster, nodes)
            if gave_up:
                settled, why = ClusterStatus.WARNING, gave_up
                if cluster.status is settled and cluster.status_reason == why:
                    return
            if cluster.lock_action_id is None and settled is not cluster.status:
                writes.statuses.append((cluster, settled, why))
                writes.events.append(
                    cluster_event(cluster, settled, why or "all nodes accounted for")
                )
            return
        by_name = {n.name: n for n in nodes}
        per_group: dict[str, set[int | str]] = {}
        for name in trouble:
            n = by_name[name]
            per_group.setdefault(n.group_name, set()).add(n.replica or n.name)
        repairs: list[Repair] = []
        repaired: list[str] = []
        warnings: list[str] = []
        for name, t in sorted(trouble.items()):
            n = by_name[name]
            policy = spec.health_of(n.group_name)
            group = spec.node_group(n.group_name)
            if policy is not None and group is not None:
                size = max(group.count, 1)
                limit = policy.max_unhealthy.limit(size)
                bad = len(per_group[n.group_name])
                if bad > limit:
                    key = (cluster.id, n.group_name)
                    if key not in self._short:
                        self._short.add(key)
                        warnings.append(
                            f"node group {n.group_name}: {bad} of {size} nodes in trouble, more "
                            f"than max_unhealthy {policy.max_unhealthy}; not remediating"
                        )
                    continue
            if self._may_repair(cluster, n, t, now, writes):
                repairs.append(Repair(name, t.how, t.why))
                repaired.append(n.id)
        reported = self._gave_up(cluster, nodes)
        if reported and (cluster.status, cluster.status_reason) != (
            ClusterStatus.WARNING,
            reported,
        ):
            writes.statuses.append((cluster, ClusterStatus.WARNING, reported))
        for text in warnings:
            writes.statuses.append((cluster, ClusterStatus.WARNING, text))
            writes.events.append(cluster_event(cluster, "WARNING", text, level="WARNING"))
        if repairs and cluster.lock_action_id is None:
            writes.repairs.append((cluster, repairs, repaired))

    def _gave_up(self, cluster: ClusterRecord, nodes: list[NodeRecord]) -> str:
        """The reported repairs still standing in this cluster, in words ("" if none)."""
        reported = [
            a for a in self._attempts.values() if a.reported and a.generation == cluster.generation
        ]
        if not reported:
            return ""  # issue 23: no name map of a 100,000-node cluster every tick for nothing
        names = {n.id: n.name for n in nodes}
        words = [
            f"{names[a.node_id]} still in trouble after {a.attempts} repair(s) ({a.finding})"
            for a in reported
            if a.node_id in names
        ]
        if not words:
            return ""
        return "repairs gave up, left as they are: " + "; ".join(sorted(words))

    def _may_repair(
        self, cluster: ClusterRecord, n: NodeRecord, t: _Trouble, now: float, writes: _Writes
    ) -> bool:
        """Whether to repair `n` now: not while its last repair's wait runs, and never again
        once `repair_attempts` repairs found it the same (then reported once)."""
        finding = f"{t.how}: {t.why}"
        a = self._attempts.get(n.id)
        if a is None or a.finding != finding or a.generation != cluster.generation:
            a = RepairAttempt(n.id, cluster.id, finding, cluster.generation, 0, 0.0)
            self._attempts[n.id] = a
        if a.attempts >= self.repair_attempts:
            if not a.reported:
                a = self._attempts[n.id] = replace(a, reported=True)
                writes.attempts.append(a)
                text = (
                    f"{n.name} found the same after {a.attempts} repair(s), "
                    f"not repairing it again: {finding}"
                )
                writes.events.append(cluster_event(cluster, "WARNING", text, level="WARNING"))
            return False
        return now >= a.not_before

    # -- writing -------------------------------------------------------------------------------

    def _write(self, writes: _Writes, now: float) -> None:
        if not (
            writes.updates
            or writes.events
            or writes.statuses
            or writes.repairs
            or writes.converge
            or writes.attempts
            or writes.forget
            or writes.loops
        ):
            return  # an idle tick writes nothing
        db = self.ctx.db
        with db.transaction() as conn:
            node_repo.update_nodes(conn, [replace(u, updated_at=now) for u in writes.updates])
            for node, loops in writes.loops:
                loop_repo.replace(conn, node.id, node.cluster_id or "", loops, now)
            loop_repo.forget_nodes(conn, sorted(set(writes.forget)))
            for cluster, status, reason in writes.statuses:
                cluster_repo.set_status(conn, cluster.id, status, reason, now)
            add_events(conn, writes.events, now)
            repair_repo.forget(conn, sorted(set(writes.forget)))
            repair_repo.save(conn, writes.attempts, now)
        tried: list[RepairAttempt] = []
        fair = in_turn(writes.repairs, lambda r: r[0].project_id)  # issue 37: tenants in turn
        for rank, (cluster, repairs, node_ids) in enumerate(fair):
            why = "drift or failed health checks"
            if submit_recover(db, cluster, repairs, now + rank * STEP_S, why) is None:
                continue  # busy: nothing was tried
            self.ctx.wake()
            for node_id in node_ids:
                a = self._attempts[node_id]
                wait = min(self.repair_backoff_s * 2**a.attempts, self.repair_backoff_max_s)
                a = replace(a, attempts=a.attempts + 1, not_before=now + wait)
                self._attempts[node_id] = a
                tried.append(a)
        if tried:
            with db.transaction() as conn:
                repair_repo.save(conn, tried, now)
        for cluster, repairs in writes.converge:
            state = self._converging.get(cluster.id)
            why = "converging to the declared cluster"
            if state is None or submit_recover(db, cluster, repairs, now, why) is None:
                continue
            state.not_before = now + self.converge_backoff_s * 2**state.attempts
            state.attempts += 1
            self.ctx.wake()

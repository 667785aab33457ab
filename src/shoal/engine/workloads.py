"""Workloads kept running (issue 22, item 3): level-triggered, on the engine's clock.

Every manager tick, for each settled cluster whose document has workloads, the keeper compares
the replica rows (store/workloads.py) with the document, the live servers and what the
provider's replica runtime reports, and acts on the difference:
- a replica with no row, or whose server is lost (its host left the inventory, or the server is
  no longer running), is placed by the second-level solver onto live servers under every rule,
  the others staying where they are, and started there;
- a replica whose container exited is started again when its restart policy says so, as
  Kubernetes does (model/restarts.py): its first exit at once, the next ones after a back-off
  (10 s, doubling, at most 300 s; at once again after it ran 10 minutes since its last start);
  it is not ready meanwhile. A runtime that tells of exits as they happen (`WatchesExits`:
  `local` reads its nodes' podman event logs) wakes the manager's tick, so an exit is seen
  within a fraction of a second rather than at the next tick;
- a replica the document no longer declares (scale-in) is stopped and its row dropped.
A placement that fails leaves the running replicas untouched and raises one event per reason.
A change of a workload's template rolls its replicas a batch per tick (engine/workload_rollouts.py);
every start uses the template the workload's rollout says (the new one, or the previous one
while and after a rollback). While a workload rolls forward, its `max_surge` extra replicas are
placed with it (`_with_surge`; none when there is no room: `_refuse_surge`). A workload whose
env reads `{members: X}` has those values folded into its revision (`member_salts`), so it
rolls when X's ready replicas (or a group's active servers) change; one whose env reads
`{output: D.X}` has a digest of those outputs folded in (`workload_env.output_salt`), so a
changed output rolls it too (decided once D's runs settle).
Every start gets the replica's env from secrets, outputs and members (engine/workload_env.py:
the runtime is wrapped for the tick, the stored template keeps literal values only).
Liveness and readiness probes run after those steps (engine/workload_probes.py): readiness
sets a replica's `ready`, a failing liveness probe restarts it.
Rows are written only when they change, so 10,000 steady replicas cost one read per tick.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from shoal.documents.port_conflicts import pod_ports
from shoal.engine import workload_env
from shoal.engine import workload_members as members
from shoal.engine import workload_probes as probes
from shoal.engine import workload_rollouts as rollouts
from shoal.engine.agent_replicas import AgentReplicas
from shoal.engine.context import EngineContext
from shoal.engine.events import cluster_event
from shoal.engine.software.decide import facts_of
from shoal.engine.spec_cache import SpecCache
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.members import MemberRef
from shoal.model.restarts import KUBERNETES, Restart, RestartBackoff
from shoal.model.software import DeploymentRecord, NodeFacts
from shoal.model.workload_rollouts import ReplicaTemplate, WorkloadPhase
from shoal.model.workloads import RestartPolicy, Workload
from shoal.placement.workloads import NodeSlot, WorkloadRefusal, place_workloads
from shoal.placement.workloads.problem import replica_names
from shoal.planning.software import retired as retired_deployments
from shoal.planning.software import targets as targets_of
from shoal.providers.capabilities import replica_runtime
from shoal.providers.errors import ProviderError
from shoal.providers.replicas import (
    ReplicaProber,
    ReplicaRuntime,
    ReplicaState,
    WatchesExits,
    carried_by_agents,
)
from shoal.store import agent_replicas as agent_repo
from shoal.store import deployments as deployment_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.events import NewEvent, add_events
from shoal.store.records import ClusterRecord, NodeRecord
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ReplicaRow

log = logging.getLogger("shoal.workloads")

BACKOFF: RestartBackoff = KUBERNETES
"""When a replica whose container exited starts again (model/restarts.py)."""
EXACT_TIME_LIMIT_S = 2.0
"""The exact search's budget on a reschedule (a tick must not stall on it)."""
_LIVE = (NodeStatus.ACTIVE, NodeStatus.WARNING)


def replica_key(cluster_id: str, replica: str) -> str:
    return f"{cluster_id}/{replica}"


@dataclass(slots=True)
class _Changes:
    save: list[ReplicaRow] = field(default_factory=list)
    drop: list[tuple[str, str]] = field(default_factory=list)
    events: list[NewEvent] = field(default_factory=list)
    rollouts: list[RolloutRow] = field(default_factory=list)
    drop_rollouts: list[tuple[str, str]] = field(default_factory=list)


def member_salts(
    spec: ClusterSpec,
    nodes: list[NodeRecord],
    rows: dict[str, ReplicaRow],
    live: dict[str, NodeRecord],
) -> dict[str, tuple[str, tuple[str, ...]]]:
    """For each workload whose env reads `{members: X}`: a digest of those values now (ready
    replicas of a workload X, active servers of a node group X) and the members it read. The
    keeper folds the digest into the workload's revision, so a change of those members rolls
    it (engine/workload_members.py)."""
    readers = [w for w in spec.workloads if members.env_members(w)]
    if not readers:
        return {}
    targets: set[str] = set()
    for w in readers:
        targets |= members.named_targets(s for _, s in members.env_members(w))
    by_target = member_facts(spec, nodes, rows, live, targets)
    return {w.name: members.rendered_salt(w, by_target) for w in readers}


def member_facts(
    spec: ClusterSpec,
    nodes: list[NodeRecord],
    rows: dict[str, ReplicaRow],
    live: dict[str, NodeRecord],
    targets: set[str],
) -> dict[str, tuple[NodeFacts, ...]]:
    """The member facts of each target (a workload's replicas, a node group's servers), by
    name: what a revision's salt digests and what a replica's env is given."""
    if not targets:
        return {}
    read = [w for w in spec.workloads if w.name in targets]
    servers = [n for n in nodes if n.kind is NodeKind.SERVER]
    found = members.replica_facts(read, rows.values(), {n.name: n for n in servers}, live=set(live))
    found += [facts_of(n) for n in servers if n.group_name in targets]
    return {t: targets_of(MemberRef(t), found) for t in targets}


def _homeless(
    wanted: dict[str, Workload],
    rows: dict[str, ReplicaRow],
    live: dict[str, NodeRecord],
    labels: Mapping[str, Mapping[str, str]],
) -> set[str]:
    """The replicas to place (again): no row, a server no longer live, or one the workload no
    longer selects (issue 36: a document moved it to other groups or labels)."""
    out: set[str] = set()
    for r, w in wanted.items():
        row = rows.get(r)
        server = live.get(row.node) if row is not None else None
        if server is None or not _selects(w, server, labels):
            out.add(r)
    return out


def _selects(w: Workload, server: NodeRecord, labels: Mapping[str, Mapping[str, str]]) -> bool:
    sel = w.selector
    if sel.groups and server.group_name not in sel.groups:
        return False
    have = labels.get(server.group_name, {})
    return all(have.get(k) == v for k, v in sel.labels.items())


def _pod_ports(spec: ClusterSpec) -> dict[str, frozenset[int]]:
    """Group -> the ports its Pod deployments bind on each of its servers (issue 36): no
    replica binding one of them is placed there."""
    out: dict[str, set[int]] = {}
    for d in spec.software.deployments:
        config = spec.software.config(d.config)
        if config is not None:
            out.setdefault(d.target.target, set()).update(pod_ports(config))
    return {g: frozenset(p) for g, p in out.items() if p}


class WorkloadKeeper:
    """Runs and keeps the replicas of every settled cluster (called by the manager's tick)."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self._specs = SpecCache()
        self._refused: dict[str, frozenset[str]] = {}
        """Per cluster, the reasons last reported (told once, not every tick)."""
        self._no_surge: set[tuple[str, str, str]] = set()
        """(cluster id, workload, target revision) of rollouts whose surge replicas found no
        room: they roll in place (asked again only for a new revision, or after a restart)."""
        self._ticks = 0
        self._probes = probes.Probes()
        self._backoff: dict[tuple[str, str], int] = {}
        """(cluster id, replica) -> its exits in a row so far (`_after_exit`)."""
        self._agents: AgentReplicas | None = None
        self._emptied: dict[str, int] = {}
        """Clusters declaring no workloads, by id -> the generation at which none of their
        replica rows was left (looked at again only when the document changes)."""
        self._held: dict[str, frozenset[str]] = {}
        """Per cluster, the nodes a start waits on: a deployment no longer declared there is
        being retired (its containers may hold the replica's address:port)."""

    @property
    def runtime(self) -> ReplicaRuntime | None:
        """The provider's replica runtime; or, on a provider whose servers' agents carry them
        (`openstack`, `local` with `replicas = "agents"`), the agent-carried one."""
        if carried_by_agents(self.ctx.provider):
            if self._agents is None:
                self._agents = AgentReplicas(self.ctx)
            return self._agents
        return replica_runtime(self.ctx.provider)

    async def exited(self) -> None:
        """Return once a replica's container exited, when the runtime tells of exits as they
        happen (`WatchesExits`); without end otherwise (the caller cancels it)."""
        runtime = self.runtime
        if isinstance(runtime, WatchesExits):
            await runtime.exited()
        else:
            await asyncio.get_running_loop().create_future()

    async def tick(
        self, clusters: list[tuple[ClusterRecord, list[NodeRecord]]], inventory: Inventory
    ) -> None:
        runtime = self.runtime
        if runtime is None:
            return
        ctx = self.ctx
        now = ctx.clock.now()
        specs = [(c, n, s) for c, n in clusters if (s := self._spec(c, inventory))]
        mine = [(c, n, s) for c, n, s in specs if s.workloads]
        dropped = [(c, n, s) for c, n, s in specs if not s.workloads]
        if dropped:  # issue 36: a document that dropped every workload; their replicas go
            left = await ctx.run_in_thread(self._leftovers, [c for c, _, _ in dropped])
            mine += [(c, n, s) for c, n, s in dropped if c.id in left]
        self._ticks += 1
        if not mine and self._ticks % 60 != 1:
            return
        rows, rolls = await ctx.run_in_thread(self._load, [c.id for c, _, _ in mine])
        hosts = {h.name for h in inventory.hosts}
        changes = _Changes()
        for cluster, nodes, spec in mine:
            if isinstance(runtime, AgentReplicas):
                runtime.declare(cluster.id, {w.name: w.restart for w in spec.workloads})
            try:
                async with asyncio.timeout(ctx.manage_limit_s):  # a runtime that hangs
                    await self._keep(
                        runtime,
                        cluster,
                        nodes,
                        spec,
                        rows.get(cluster.id, {}),
                        {w: r for (c, w), r in rolls.items() if c == cluster.id},
                        hosts,
                        now,
                        changes,
                    )
            except Exception:
                log.exception("keeping %s's workloads failed; trying again next tick", cluster.name)
        if (
            changes.save
            or changes.drop
            or changes.events
            or changes.rollouts
            or changes.drop_rollouts
            or self._ticks % 60 == 1
        ):
            await ctx.run_in_thread(self._write, changes, now)

    # -- one cluster ---------------------------------------------------------------------------

    async def _keep(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        nodes: list[NodeRecord],
        spec: ClusterSpec,
        rows: dict[str, ReplicaRow],
        rolls: dict[str, RolloutRow],
        hosts: set[str],
        now: float,
        changes: _Changes,
    ) -> None:
        live = {
            n.name: n
            for n in nodes
            if n.kind is NodeKind.SERVER
            and n.status in _LIVE
            and n.provider_id is not None
            and n.host in hosts
        }
        workloads = {w.name: w for w in spec.workloads}
        out = rollouts.StepOut()
        for name in rolls:
            if name not in workloads:
                changes.drop_rollouts.append((cluster.id, name))
        salts = member_salts(spec, nodes, rows, live)
        records: list[DeploymentRecord] = []
        if workload_env.reads_outputs(spec.workloads):
            records = await self.ctx.run_in_thread(self._records, cluster.id)
        for w in spec.workloads:
            salt, read = salts.get(w.name, ("", ()))
            secret = workload_env.secret_salt(w, spec.software.secrets)
            if secret:
                salt = f"{salt}/{secret}"
            outputs, named = workload_env.output_salt(w, records)
            if outputs is None and w.name in rolls:
                continue  # an output it reads is not settled: decide once it is
            if outputs:
                salt = f"{salt}//{outputs}"
            roll, changed = rollouts.begin(
                cluster, w, rolls.get(w.name), now, out, salt=salt, members=read, outputs=named
            )
            rolls[w.name] = roll
            if changed and outputs is not None:  # (a first one waiting for outputs: not kept)
                changes.rollouts.append(roll)
        changes.events.extend(out.events)
        goals = {name: rollouts.goal_of(r) for name, r in rolls.items() if name in workloads}
        placing = self._with_surge(cluster, spec, rolls)
        wanted = {r: w for w in placing for r in replica_names(w)}
        waiting: set[str] = set()
        if workload_env.needs_resolving(spec.workloads):
            runtime, waiting = await self._with_env(
                runtime, cluster, nodes, spec, rows, live, wanted, records
            )
        for replica, row in rows.items():
            if replica not in wanted:  # scaled in, or the workload left the document
                await runtime.stop_replica(replica_key(cluster.id, replica))
                changes.drop.append((cluster.id, replica))
                self._backoff.pop((cluster.id, replica), None)
                declared = workloads.get(row.workload)
                if declared is not None and rollouts.is_surge(declared, replica):
                    changes.events.append(
                        cluster_event(
                            cluster,
                            "WORKLOAD",
                            f"workload {row.workload}: surge replica {replica} stopped",
                        )
                    )
        keys = [replica_key(cluster.id, r) for r in rows if r in wanted]
        states = await runtime.replica_states(keys) if keys else {}
        # Where a replica must be placed (again): no row, or its server is no longer live. A
        # container lost while its server is live (the server was replaced under the same name,
        # or the runtime forgot it) is started again where it was, in `_restart`.
        labels = {g.name: g.labels for g in spec.node_groups}
        homeless = _homeless(wanted, rows, live, labels)
        placed_now: set[str] | None = set()
        if homeless:
            placed_now = await self._place(
                runtime, cluster, placing, spec, live, rows, wanted, homeless, goals, now, changes
            )
            if placed_now is None:  # no room for the surge replicas: roll in place instead
                self._refuse_surge(cluster, spec, rolls, changes)
                placing = list(spec.workloads)
                wanted = {r: w for w in placing for r in replica_names(w)}
                homeless = _homeless(wanted, rows, live, labels)
                placed_now = set()
                if homeless:
                    placed_now = await self._place(
                        runtime,
                        cluster,
                        placing,
                        spec,
                        live,
                        rows,
                        wanted,
                        homeless,
                        goals,
                        now,
                        changes,
                    )
        placed_now = placed_now or set()
        for replica, w in wanted.items():
            kept = rows.get(replica)
            if kept is None or replica in placed_now or replica in homeless:
                continue
            state = states.get(replica_key(cluster.id, replica), ReplicaState.LOST)
            if w.name in waiting and state is not ReplicaState.RUNNING:
                continue  # an output its env reads is not known yet: no start to try (or log)
            template = rollouts.template_for(rolls[w.name], kept.revision)
            await self._restart(
                runtime, cluster, workloads[w.name], kept, state, live, template, now, changes
            )
        await self._roll(
            runtime, cluster, placing, spec, rows, rolls, states, live, now, changes, waiting
        )
        await self._probe(
            runtime, cluster, workloads, wanted, rows, rolls, states, live, now, changes
        )

    async def _probe(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        workloads: dict[str, Workload],
        wanted: dict[str, Workload],
        rows: dict[str, ReplicaRow],
        rolls: dict[str, RolloutRow],
        states: dict[str, ReplicaState],
        live: dict[str, NodeRecord],
        now: float,
        changes: _Changes,
    ) -> None:
        """Liveness and readiness probes (engine/workload_probes.py) over the rows as this
        tick left them: readiness into the rows' `ready`, liveness failures restarted."""
        if not any(probes.has_probes(w) for w in workloads.values()):
            self._probes.forget(cluster.id)
            return
        current = {r: row for r, row in rows.items() if r in wanted}
        current.update(
            {
                r.replica: r
                for r in changes.save
                if r.cluster_id == cluster.id and r.replica in wanted
            }
        )
        keys = {r: replica_key(cluster.id, r) for r in current}
        out = await self._probes.run(
            runtime, cluster, workloads, current, states, keys, live, rolls, now
        )
        changes.save.extend(out.save)
        changes.events.extend(out.events)

    async def _with_env(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        nodes: list[NodeRecord],
        spec: ClusterSpec,
        rows: dict[str, ReplicaRow],
        live: dict[str, NodeRecord],
        wanted: dict[str, Workload],
        records: list[DeploymentRecord],
    ) -> tuple[ReplicaRuntime, set[str]]:
        """The runtime as this tick's starts see it: each start gets its replica's env from
        secrets, members and outputs (`records`, the cluster's deployment records when some env
        reads an output; engine/workload_env.py), never stored; and the workloads whose env
        waits for an output not known yet."""
        targets = workload_env.member_targets(spec.workloads)
        sources = workload_env.EnvSources(
            spec.software.secrets,
            member_facts(spec, nodes, rows, live, targets),
            records,
        )
        declared = {w.name: w for w in spec.workloads}
        wrapped = workload_env.with_env(
            runtime,
            sources,
            {replica_key(cluster.id, r): declared[w.name] for r, w in wanted.items()},
            {n.provider_id: n.name for n in live.values() if n.provider_id is not None},
        )
        return wrapped, {w.name for w in spec.workloads if sources.waiting_for(w)}

    def _records(self, cluster_id: str) -> list[DeploymentRecord]:
        with self.ctx.db.reading() as conn:
            return [r for _, r in deployment_repo.records_for(conn, cluster_id)]

    # -- surge replicas of a rolling update (engine/workload_rollouts.py) -----------------------

    def _with_surge(
        self, cluster: ClusterRecord, spec: ClusterSpec, rolls: dict[str, RolloutRow]
    ) -> list[Workload]:
        """The workloads as the solver places them this tick: each rolling forward with its
        `max_surge` extra replicas, unless the solver found no room for them in this rollout."""
        found: list[Workload] = []
        for w in spec.workloads:
            roll = rolls.get(w.name)
            surge = rollouts.surge_of(w, roll)
            if roll is not None and (cluster.id, w.name, roll.target.revision) in self._no_surge:
                surge = 0
            found.append(rollouts.surged(w, surge))
        return found

    def _refuse_surge(
        self,
        cluster: ClusterRecord,
        spec: ClusterSpec,
        rolls: dict[str, RolloutRow],
        changes: _Changes,
    ) -> None:
        """Surge replicas found no room: this rollout goes on in place (told once)."""
        for w in spec.workloads:
            roll = rolls.get(w.name)
            if roll is None or rollouts.surge_of(w, roll) == 0:
                continue
            key = (cluster.id, w.name, roll.target.revision)
            if key in self._no_surge:
                continue
            self._no_surge.add(key)
            changes.events.append(
                cluster_event(
                    cluster,
                    "WORKLOAD",
                    f"workload {w.name}: no room for {w.update.max_surge} surge replica(s) "
                    "under its rules; rolling in place",
                    level="WARNING",
                )
            )

    async def _roll(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        placing: list[Workload],
        spec: ClusterSpec,
        rows: dict[str, ReplicaRow],
        rolls: dict[str, RolloutRow],
        states: dict[str, ReplicaState],
        live: dict[str, NodeRecord],
        now: float,
        changes: _Changes,
        waiting: set[str],
    ) -> None:
        """A step of each workload's rollout, over its rows as this tick left them (none for
        a workload in `waiting`: an output its env reads is not known yet, which is no failure
        of its new template)."""
        moving = (WorkloadPhase.ROLLING, WorkloadPhase.ROLLING_BACK)
        if not any(r.phase in moving for r in rolls.values()):
            return  # (the steady state: no copy of 10,000 rows per tick)
        current = dict(rows)
        current.update({r.replica: r for r in changes.save if r.cluster_id == cluster.id})
        declared = {w.name: w for w in spec.workloads}
        for placed in placing:
            w = declared[placed.name]
            roll = rolls[w.name]
            if roll.phase not in (WorkloadPhase.ROLLING, WorkloadPhase.ROLLING_BACK):
                continue
            if w.name in waiting:
                continue
            names = replica_names(placed)  # with its surge replicas
            mine = {x: current[x] for x in names if x in current}
            if len(mine) < len(names):  # not all placed yet (or unplaceable): wait
                continue
            out = rollouts.StepOut()
            keys = {x: replica_key(cluster.id, x) for x in mine}
            after = await rollouts.step(
                runtime, cluster, w, roll, mine, states, live, keys, now, out
            )
            changes.save.extend(out.rows)
            changes.events.extend(out.events)
            if after != roll:
                rolls[w.name] = after
                changes.rollouts.append(after)

    async def _place(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        placing: list[Workload],
        spec: ClusterSpec,
        live: dict[str, NodeRecord],
        rows: dict[str, ReplicaRow],
        wanted: dict[str, Workload],
        homeless: set[str],
        goals: dict[str, ReplicaTemplate],
        now: float,
        changes: _Changes,
    ) -> set[str] | None:
        """Place the homeless replicas and start them; the replicas started, or None when
        `placing` asked for surge replicas and the solver refused (the caller tries without)."""
        labels = {g.name: g.labels for g in spec.node_groups}
        pods = _pod_ports(spec)
        slots = [
            NodeSlot(
                n.name,
                n.group_name,
                n.vcpus * 1000,
                n.ram_mb,
                host=n.host,
                zone=n.zone,
                labels=labels.get(n.group_name, {}),
                bound_ports=pods.get(n.group_name, frozenset()),
            )
            for n in live.values()
        ]
        existing = {r: row.node for r, row in rows.items() if r in wanted and r not in homeless}
        held = await self.ctx.run_in_thread(
            self._retiring_nodes, cluster.id, spec, list(live.values())
        )
        answer = place_workloads(placing, slots, existing, exact_time_limit_s=EXACT_TIME_LIMIT_S)
        if isinstance(answer, WorkloadRefusal):
            if any(p.replicas != w.replicas for p, w in zip(placing, spec.workloads, strict=True)):
                return None
            # Each reason once while the refusal lasts (issue 36: a refusal whose other
            # reasons changed from one tick to the next said the same one again).
            said = self._refused.get(cluster.id, frozenset())
            new = [r for r in dict.fromkeys(answer.reasons) if r not in said]
            self._refused[cluster.id] = said | frozenset(new)
            changes.events.extend(
                cluster_event(
                    cluster, "WORKLOAD", f"replicas cannot be placed: {r}", level="WARNING"
                )
                for r in new
            )
            return set()
        self._refused.pop(cluster.id, None)
        spec_of = {w.name: w for w in spec.workloads}
        started: set[str] = set()
        for replica, node in answer.node_of.items():
            row = rows.get(replica)
            if row is not None and replica not in homeless and row.node == node:
                continue
            if node in held:
                continue  # removals first: placed again next tick, once the node is free
            key = replica_key(cluster.id, replica)
            server = live[node]
            assert server.provider_id is not None
            goal = goals[wanted[replica].name]
            if row is not None:
                await runtime.stop_replica(key)
            try:
                await runtime.start_replica(key, server.provider_id, goal)
            except ProviderError as e:
                log.warning("could not start %s on %s: %s", replica, node, e)
                changes.save.append(
                    ReplicaRow(
                        cluster.id,
                        replica,
                        wanted[replica].name,
                        node,
                        False,
                        revision=goal.revision,
                    )
                )
                continue
            started.add(replica)
            changes.save.append(
                ReplicaRow(
                    cluster.id,
                    replica,
                    wanted[replica].name,
                    node,
                    True,
                    started_at=now,
                    revision=goal.revision,
                )
            )
            surge = rollouts.is_surge(spec_of[wanted[replica].name], replica)
            if surge and row is None:
                changes.events.append(
                    cluster_event(
                        cluster,
                        "WORKLOAD",
                        f"workload {wanted[replica].name}: surge replica {replica} started on "
                        f"{node} (revision {goal.revision})",
                    )
                )
            if row is not None and row.node != node:
                changes.events.append(
                    cluster_event(
                        cluster, "WORKLOAD", f"replica {replica} moved from {row.node} to {node}"
                    )
                )
        return started

    async def _restart(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        workload: Workload,
        row: ReplicaRow,
        state: ReplicaState,
        live: dict[str, NodeRecord],
        template: ReplicaTemplate,
        now: float,
        changes: _Changes,
    ) -> None:
        if state is ReplicaState.RUNNING:
            if probes.gates_readiness(workload) and isinstance(runtime, ReplicaProber):
                # Ready when its readiness probe says (engine/workload_probes.py), which probes
                # only a replica with no restart pending.
                if row.not_before is not None:
                    changes.save.append(replace(row, not_before=None))
                return
            if not row.ready:  # (started by another keeper, or a row written before a crash)
                changes.save.append(replace(row, ready=True, not_before=None))
            return
        if state is ReplicaState.LOST:  # not an exit of its own: no back-off, no restart count
            row = replace(row, not_before=now)
        if row.not_before is None:
            if row.started_at is not None and workload.restart is RestartPolicy.NEVER:
                if row.ready:
                    changes.save.append(replace(row, ready=False))
                return
            restarts = row.restarts + (1 if row.started_at is not None else 0)
            due = self._after_exit(cluster, row, now)
            row = replace(row, ready=False, restarts=restarts, not_before=due.at)
            changes.save.append(row)
            if row.started_at is not None:
                when = "at once" if due.at_once else f"in {due.wait_s:.0f} s"
                changes.events.append(
                    cluster_event(
                        cluster,
                        "WORKLOAD",
                        f"replica {row.replica}'s container exited; restart {restarts} {when}",
                        level="WARNING",
                    )
                )
            if not due.at_once:
                return
        assert row.not_before is not None
        if now < row.not_before:
            return
        server = live[row.node]
        assert server.provider_id is not None
        try:
            await runtime.start_replica(
                replica_key(cluster.id, row.replica), server.provider_id, template
            )
        except ProviderError as e:
            log.warning("could not restart %s on %s: %s", row.replica, row.node, e)
            if row.ready:
                changes.save.append(replace(row, ready=False))
            return
        changes.save.append(
            replace(row, ready=True, not_before=None, started_at=now, revision=template.revision)
        )

    def _after_exit(self, cluster: ClusterRecord, row: ReplicaRow, now: float) -> Restart:
        """When `row`'s container, seen exited at `now`, starts again (`BACKOFF`: at once for
        the first exit in a row). The streak is kept in memory, as the kubelet keeps it: a new
        engine (or lease holder) goes on from the restart count instead (`restarts` keeps
        counting either way); a replica never started is no exit of its own."""
        key = (cluster.id, row.replica)
        due = BACKOFF.after_exit(self._backoff.get(key, row.restarts), row.started_at, now)
        if row.started_at is not None:
            self._backoff[key] = due.streak
        return due

    # -- reading and writing -------------------------------------------------------------------

    def _spec(self, cluster: ClusterRecord, inventory: Inventory) -> ClusterSpec | None:
        return self._specs.get(cluster, inventory)

    def _leftovers(self, clusters: list[ClusterRecord]) -> set[str]:
        """Of clusters declaring no workloads, those with replica rows left from an earlier
        document (one read for those not known empty at their generation)."""
        unknown = [c for c in clusters if self._emptied.get(c.id) != c.generation]
        if not unknown:
            return set()
        with self.ctx.db.reading() as conn:
            found = replica_repo.clusters_with_rows(conn, [c.id for c in unknown])
        if len(self._emptied) > 100_000:
            self._emptied.clear()
        for c in unknown:
            if c.id not in found:
                self._emptied[c.id] = c.generation
        return found

    def _retiring_nodes(
        self, cluster_id: str, spec: ClusterSpec, nodes: list[NodeRecord]
    ) -> set[str]:
        """The nodes where a deployment no longer declared is still to be retired (its row
        stays until the deployer removed what it left): a replica's start there waits."""
        with self.ctx.db.reading() as conn:
            records = deployment_repo.records_for(conn, cluster_id)
        if not records:
            return set()
        servers = [n for n in nodes if n.kind is NodeKind.SERVER and n.deleted_at is None]
        ids = {n.id for n in servers}
        # Rows of deleted nodes stay for their history, maybe under a name a new node took.
        mine = [r for node_id, r in records if node_id in ids]
        retired = retired_deployments(spec.software, [facts_of(n) for n in servers], mine)
        return {r.node for r in retired}

    def _load(
        self, cluster_ids: list[str]
    ) -> tuple[dict[str, dict[str, ReplicaRow]], dict[tuple[str, str], RolloutRow]]:
        with self.ctx.db.reading() as conn:
            return replica_repo.load(conn, cluster_ids), rollout_repo.load(conn, cluster_ids)

    def _write(self, changes: _Changes, now: float) -> None:
        # A replica may change twice in a tick (restarted, then rolled): its last row wins.
        last = {(r.cluster_id, r.replica): r for r in changes.save}
        rolls = {(r.cluster_id, r.workload): r for r in changes.rollouts}
        with self.ctx.db.transaction() as conn:
            replica_repo.forget(conn, changes.drop)
            replica_repo.save(conn, list(last.values()), now)
            rollout_repo.forget(conn, changes.drop_rollouts)
            rollout_repo.save(conn, list(rolls.values()), now)
            add_events(conn, changes.events, now)
            if self._ticks % 60 == 1:
                replica_repo.drop_orphans(conn)
                agent_repo.drop_orphans(conn)

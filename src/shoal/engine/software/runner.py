"""The deployer: one engine task that decides, claims, runs and finishes NODE_DEPLOY actions.

Each pass:
1. *decide* (at most every `tick_s`, or after a run finished, but never more than half the
   time: see `_Pacing.decide_gap`): the NODE_DEPLOY actions now due (`decide.py`) on the
   clusters of this engine's deployer partitions (issue 23: the 64 hash ranges of cluster ids,
   each a lease `deploy/<k>`, shared over the live engines like management's, so an engine's
   death moves only its share); rollout gates and agents are looked after there too;
2. *claim* READY NODE_DEPLOY actions (and RUNNING ones whose engine died), any engine's, up to
   this engine's fair share of the deployment work over the live engines, and, in the same
   transaction, *publish* each run: its row goes IN_PROGRESS with the run's digest and signal
   hash, which is what the node's metadata then serves. A run whose row already COMPLETEd with
   the same digest, or whose own run already ended, is not run again (resuming after an engine
   died never repeats a completed deployment);
3. *run*: a provider that runs deployments itself (the simulated cloud) is awaited; otherwise
   the run waits for the agents' signal to reach the row (`service/deployments.py`), up to the
   deployment's timeout on the engine's clock;
4. *finish*, batched in one transaction: the row, the action, the node (a failed deployment
   puts it in WARNING with the tail of stderr; a later success clears that), events, and the
   cluster's settled status, so failed deployments count toward its health.
Retries are not looped here: a FAILED row is due again while its attempts allow
(`planning.software.due`), so a retry is just another decision.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from shoal.engine import notifications
from shoal.engine.context import EngineContext
from shoal.engine.events import node_event
from shoal.engine.settle import declared_nodes, settled_status
from shoal.engine.software import secrets
from shoal.engine.software.decide import (
    RUNNABLE_NODE,
    SETTLED,
    HealthOf,
    PoliciesOf,
    Retirement,
    SoftwareOf,
    WorkloadsOf,
    decide,
    record,
)
from shoal.engine.software.gate import check_gates
from shoal.engine.software.inputs import DeployInputs, publication
from shoal.engine.software.removal import run_removals
from shoal.engine.software.urls import Urls
from shoal.model.enums import ActionKind, ActionStatus, NodeStatus
from shoal.model.heat_agent import with_heat_outputs
from shoal.model.software import DeploymentSignal, DeploymentStatus, SoftwareSpec
from shoal.providers.errors import ProviderError
from shoal.providers.replicas import carried_by_agents
from shoal.providers.software import (
    DeploymentRun,
    DeploymentRunner,
    RetiresDeployments,
    RunsDeployments,
    StartsAgents,
)
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as deployment_repo
from shoal.store import engines as engine_repo
from shoal.store import leases
from shoal.store import nodes as node_repo
from shoal.store.actions import Completion
from shoal.store.deployments import DeploymentRow, Finish, Publish
from shoal.store.events import NewEvent, add_events
from shoal.store.records import ActionRecord, ClusterRecord, NodeChange, NodeRecord
from shoal.telemetry.notify import Notifier, Silent

log = logging.getLogger("shoal.deployer")

LEASE = "deployer"
"""The single lease of deployments before issue 23: released at close by engines that may
still hold it from an older version; no longer taken."""
REASON_PREFIX = "deployment "
"""Node status reasons written here start so, so a later success clears only its own."""
_KINDS = [ActionKind.NODE_DEPLOY.value]
_TERMINAL_ROW = (DeploymentStatus.COMPLETE, DeploymentStatus.FAILED)
_CONTAINER_HOOKS = ("docker-compose", "kubelet")
POLL_S = 0.25
"""How often runs awaiting their agents' signals look at their rows (sooner when woken)."""
IDLE_GAP = 4.0
"""After a decision pass that left runs live, how many times its own duration the next one
waits (see `_Pacing.idle_passes`)."""
AGENTS_EVERY_S = 5.0
"""How often the servers of clusters with software are made sure to run agents (on providers
that can start them on a running server)."""


@dataclass(frozen=True, slots=True)
class _Claimed:
    action: ActionRecord
    run: DeployInputs
    node: NodeRecord | None
    settled: DeploymentRow | None
    """The row when this run need not (or must not) run: already ended, or already complete
    with the same digest."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    claimed: _Claimed
    finish: Finish | None
    """What to write on the row; None when the row already holds the outcome."""
    status: DeploymentStatus
    status_code: int | None
    stderr: str


@dataclass(slots=True)
class _Pacing:
    """When the deployer last did each periodic thing (on the engine's clock), and whether it
    must decide or look at signals again at once."""

    decided_at: float = -1e18
    agents_at: float = -1e18
    polled_at: float = -1e18
    dirty: bool = True
    """Something changed: decide again on the next pass, whatever the time."""
    signalled: bool = False
    """This process took a signal: look at the waiting runs' rows on the next pass."""
    decided_through: float = -1e18
    """When the last finished decision pass (its gates checked) began."""
    decide_gap: float = 0.0
    decided_end: float = -1e18
    """How long the last decision pass took and when it ended, in real time (the process's
    own cost, whatever the engine's clock says): the next one waits at least as long after it
    (issue 23). A pass reads the whole cluster, so deciding again after every finished batch
    made the passes as many as the batches, and the cost per deployment grew with the nodes;
    this way the deployer decides at most half the time and each pass finds more to do. The
    wait is not capped at `tick_s`: a pass of a 20,000-node cluster on a loaded machine takes
    longer than that, and a capped wait had the deployer deciding three quarters of the time."""
    live: int = 0
    """NODE_DEPLOY actions of this engine's clusters live after the last decision pass."""
    ended: int = 0
    """Runs this engine finished since then."""
    idle_passes: int = 0
    """Decision passes in a row that left runs live and moved no rollout on (issue 23): a
    chained deployment waits for the one before it on every node, so while 20,000 runs
    drained, pass after pass over the whole cluster found nothing (20 of 23 passes, 70 % of
    the deciding, at 20,000 nodes). After such a pass the next waits `IDLE_GAP` times as
    long, unless every run live at the last pass has since ended here (then what was waiting
    on them is due, and deciding at once keeps the runs flowing)."""
    moved: bool = False
    """The last decision pass moved a rollout on."""
    balanced_at: float = -1e18
    """When the deployer partitions were last renewed and balanced."""
    software: bool = True
    """Whether the last decision pass found a cluster of this engine's with deployments (until
    one ran, assume so)."""


class Deployer:
    def __init__(
        self,
        engine: EngineContext,
        software_of: SoftwareOf,
        *,
        lease_s: float = 30.0,
        policies_of: PoliciesOf | None = None,
        health_of: HealthOf | None = None,
        workloads_of: WorkloadsOf | None = None,
        tick_s: float = 2.0,
        concurrency: int = 2000,
    ) -> None:
        self.engine = engine
        self.lease_s = lease_s
        self.software_of = software_of
        self.policies_of: PoliciesOf = policies_of or (lambda _c: {})
        self.health_of: HealthOf = health_of or (lambda _c: {})
        self.workloads_of: WorkloadsOf = workloads_of or (lambda _c: ())
        self.partitions: frozenset[int] = frozenset()
        """The deployer partitions this engine holds (as of its last balance): it decides, gates
        and starts agents for the clusters in them."""
        self._partition: dict[str, int] = {}
        self._pace = _Pacing()
        self.tick_s = tick_s
        self.concurrency = concurrency
        self.notifier: Notifier = Silent()  # issue 27: set with the engine's
        self._inflight: set[asyncio.Task[None]] = set()
        self._running: set[str] = set()
        """Action ids this engine is running: a lease of ours that ran out (a stalled heartbeat,
        a clock jump) may be claimed again, by us too, and must not start a second run."""
        self._done: list[_Outcome] = []
        self._waiting: dict[str, tuple[float, asyncio.Future[DeploymentRow | str]]] = {}
        self._signal_key: str | None = None
        self._server_key: str | None = None
        self.agent_url: str | None = None
        """Where servers' agents reach the API (set by `shoal server`); None: no agents."""
        self._clusters = cluster_repo.ClusterCache()
        """Cluster rows read by earlier passes (a document changes only with its generation)."""
        self._retiring: list[Retirement] = []
        """Rows of deployments no longer declared on their node, whose leftovers the provider
        removes before the rows go (issue 36; `_retire`)."""
        self._clean: dict[str, int] = {}
        """Clusters declaring no deployments, by id -> the generation at which a pass found
        nothing of theirs left to retire (looked at again only when the document changes)."""
        self._has_software: dict[str, asyncio.Future[bool]] = {}
        """Per cluster action (parent id): whether its cluster declares software (the document
        cannot change under an action that holds the cluster's lock)."""

    @property
    def decided_through(self) -> float:
        """The engine-clock time at which the last finished decision pass began: once it
        reaches T, the deployer has decided (and checked its rollouts' gates) as of T."""
        return self._pace.decided_through

    def wake(self) -> None:
        """Something changed (a signal arrived, a cluster settled): decide again now."""
        self._pace.dirty = True
        self._pace.signalled = True
        self.engine.wake()

    async def close(self) -> None:
        """Stop running: a run in flight is left RUNNING for its lease to run out (resumable)."""
        for t in list(self._inflight):
            t.cancel()
        for t in list(self._inflight):
            with contextlib.suppress(asyncio.CancelledError):
                await t
        e = self.engine
        await asyncio.to_thread(leases.release, e.db, LEASE, e.owner)
        await asyncio.to_thread(
            engine_repo.release_partitions,
            e.db,
            e.owner,
            partition_prefix=engine_repo.DEPLOYER_PREFIX,
            member_prefix=engine_repo.DEPLOYING_PREFIX,
        )
        self.partitions = frozenset()

    @property
    def idle(self) -> bool:
        """Nothing of its own to time: no run in flight, waiting or to publish, nothing to decide
        at once, and no cluster of its partitions with deployments. Its loop may then wait
        longer for a wake-up (issue 23: deciding and claiming over nothing every second was
        most of an idle engine's CPU); runs made elsewhere NOTIFY it."""
        p = self._pace
        return not (self._inflight or self._waiting or self._done or p.dirty or p.software)

    def mine(self, cluster_id: str) -> bool:
        """Whether `cluster_id` is in this engine's deployer partitions."""
        k = self._partition.get(cluster_id)
        if k is None:
            if len(self._partition) > 100_000:
                self._partition.clear()
            k = self._partition[cluster_id] = engine_repo.partition_of(cluster_id)
        return k in self.partitions

    def _due(self, mono: float) -> bool:
        pace = self._pace
        gap = pace.decide_gap
        if pace.idle_passes and pace.ended < pace.live:
            gap *= IDLE_GAP
        if time.perf_counter() - pace.decided_end < gap:
            return False
        return pace.dirty or mono - pace.decided_at >= self.tick_s

    async def once(self) -> bool:
        e = self.engine
        busy = False
        mono = e.clock.now()  # the engine's clock: tests drive the pacing as they drive time
        if self._due(mono):
            self._pace.dirty = False
            self._pace.decided_at = mono
            started = time.perf_counter()
            made = await asyncio.to_thread(self._decide)
            busy |= made > 0
            if self._retiring:
                busy |= await self._retire()
            p = self._pace
            idle = p.live > 0 and not p.moved
            p.idle_passes = p.idle_passes + 1 if idle else 0
            p.ended = 0
            self._pace.decided_end = time.perf_counter()
            self._pace.decide_gap = self._pace.decided_end - started
            if self.partitions and await check_gates(self):
                self._pace.dirty = True
                self._pace.idle_passes = 0  # a gate let a rollout on: decide again soon
                busy = True
            self._pace.decided_through = mono
            if self.partitions and mono - self._pace.agents_at >= AGENTS_EVERY_S:
                self._pace.agents_at = mono
                await self._ensure_agents()
        free = self.concurrency - len(self._inflight)
        if free > 0:
            claimed = await asyncio.to_thread(self._claim, free)
            for c in claimed:
                if c.action.id in self._running:
                    continue
                self._running.add(c.action.id)
                task = asyncio.create_task(self._run(c))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
            busy |= bool(claimed)
        if self._waiting and (self._pace.signalled or mono - self._pace.polled_at >= POLL_S):
            # Signals reach the rows through the API (maybe another process's): look at the
            # waiting runs' rows now and then, at once when this process took a signal.
            self._pace.signalled = False
            self._pace.polled_at = mono
            await asyncio.to_thread(self._poll_signals, e.clock.now())
        if self._done:
            batch, self._done = self._done, []
            try:
                await asyncio.to_thread(self._finish, batch)
            except Exception:
                self._done = batch + self._done
                raise
            self._running.difference_update(o.claimed.action.id for o in batch)
            self._pace.ended += len(batch)
            self._pace.dirty = True
            busy = True
        return busy

    # -- deciding ------------------------------------------------------------------------------

    def _balance(self, now: float) -> None:
        """Renew this engine's deployer partitions and move toward its fair share (every
        ttl / 6: renewing is a write)."""
        ttl = max(self.lease_s, 3.0)
        if now - self._pace.balanced_at < ttl / 6:
            return
        self._pace.balanced_at = now
        e = self.engine
        self.partitions = engine_repo.balance(
            e.db,
            e.owner,
            now,
            ttl,
            partition_prefix=engine_repo.DEPLOYER_PREFIX,
            member_prefix=engine_repo.DEPLOYING_PREFIX,
        )

    def _decide(self) -> int:
        e = self.engine
        now = e.clock.now()
        self._balance(now)
        if not self.partitions:
            self._pace.software = False
            return 0
        with e.db.reading() as conn:
            clusters = [
                c
                for c in cluster_repo.list_clusters_cached(conn, self._clusters)
                if c.status in SETTLED and c.lock_action_id is None and self.mine(c.id)
            ]
        made = 0
        self._pace.software = False
        self._pace.live = 0
        self._pace.moved = False
        declaring = {c.id: self.software_of(c) for c in clusters}
        leftovers = self._leftovers(
            [c for c in clusters if not (s := declaring[c.id]) or not s.deployments]
        )
        for c in clusters:
            software = declaring[c.id]
            if software is None or not software.deployments:
                if c.id not in leftovers:
                    continue
                software = SoftwareSpec()  # what an earlier document deployed is retired
            else:
                self._clean.pop(c.id, None)
            self._pace.software = True
            try:
                made += self._decide_one(c, software, now)
            except Exception:
                log.exception("deciding deployments of %s failed; next pass retries", c.name)
        return made

    def _decide_one(self, cluster: ClusterRecord, software: SoftwareSpec, now: float) -> int:
        with self.engine.db.transaction() as conn:
            current = cluster_repo.get_cluster(conn, cluster.id)
            if current is None or current.lock_action_id is not None:
                return 0
            decision = decide(
                conn,
                current,
                software,
                self.policies_of(current),
                now,
                workloads_of=self.workloads_of,
            )
            if decision.rollouts:
                self._pace.dirty = True  # a rollout moved on: its next step may be due at once
                self._pace.moved = True  # ... so this pass was no idle one
            record(conn, decision, now)
            self._pace.live += decision.live
            self._retiring.extend(decision.retire)
            if not software.deployments and not decision.retire and not decision.live:
                self._clean[current.id] = current.generation
            return len(decision.actions)

    def _leftovers(self, clusters: list[ClusterRecord]) -> set[str]:
        """Of clusters declaring no deployments, those that may still have some of an earlier
        document's to retire: rows on them, unless a pass at their current generation found
        nothing to do (one read for all of them, only of clusters not known clean)."""
        unknown = [c for c in clusters if self._clean.get(c.id) != c.generation]
        if not unknown:
            return set()
        with self.engine.db.reading() as conn:
            found = deployment_repo.clusters_with_rows(conn, [c.id for c in unknown])
        if len(self._clean) > 100_000:
            self._clean.clear()
        for c in unknown:
            if c.id not in found:
                self._clean[c.id] = c.generation
        return found

    async def _retire(self) -> bool:
        """Remove what each retired deployment left on its node (the provider's part), then
        drop its row, with an event; a provider error leaves the row for the next pass."""
        batch, self._retiring = self._retiring, []
        provider = self.engine.provider
        retirer = provider if isinstance(provider, RetiresDeployments) else self.runner()
        done: list[Retirement] = []
        for r in batch:
            try:
                if isinstance(retirer, RetiresDeployments):
                    await retirer.retire(r.retired)
            except ProviderError as e:
                log.warning(
                    "could not retire %s from %s: %s", r.retired.deployment, r.retired.node, e
                )
                continue
            done.append(r)
        if done:
            await asyncio.to_thread(self._drop_retired, done)
            self._pace.dirty = True  # what waited for them may run now
        return bool(done)

    def _drop_retired(self, done: list[Retirement]) -> None:
        e = self.engine
        now = e.clock.now()
        with e.db.transaction() as conn:
            deployment_repo.drop(conn, [r.row_id for r in done])
            add_events(
                conn,
                [
                    node_event(
                        project_id=r.project_id,
                        cluster_id=r.cluster_id,
                        node_id=r.node_id,
                        name=r.retired.node,
                        status="RETIRED",
                        message=f"deployment {r.retired.deployment} retired: no longer declared "
                        "on this node"
                        + ("; its DELETE ran" if r.deleted else "")
                        + (
                            "; its containers removed" if r.retired.hook in _CONTAINER_HOOKS else ""
                        ),
                    )
                    for r in done
                ],
                now,
            )

    # -- claiming and publishing ---------------------------------------------------------------

    def _fair_share(self, now: float) -> int:
        """How many deployment runs this engine may claim now: with other deploying engines
        alive, its share of those runnable or running, less what it runs (at least a small
        batch while any wait, so a lopsided start still drains); alone, all of them."""
        e = self.engine
        # Issue 23: nothing runnable means no share whatever the engines: one read, not three
        # (every node flush wakes this loop; at 20,000 nodes counting the engines and the work
        # over nothing was 0.9 s of the engines' CPU).
        with e.db.reading() as conn:
            if not action_repo.claimable(conn, _KINDS, now):
                return 0
            # In the same read (issue 23: a connection checked out for each of the three).
            engines = engine_repo.count_live(conn, now, prefix=engine_repo.DEPLOYING_PREFIX)
            if engines <= 1:
                return 2000
            pending, running = action_repo.node_work(conn, now, _KINDS)
        share = -(-(pending + running) // engines)
        return min(pending, max(share - len(self._inflight), 16 if pending else 0))

    def _claim(self, limit: int) -> list[_Claimed]:
        e = self.engine
        now = e.clock.now()
        limit = min(limit, self._fair_share(now))
        if limit <= 0:
            return []
        with e.db.transaction() as conn:
            claimed = action_repo.claim(
                conn,
                owner=e.owner,
                now=now,
                lease_s=self.lease_s,
                limit=min(limit, 2000),
                node_level=True,
                skip_locked=not e.db.is_sqlite,
                kinds=_KINDS,
            )
            if not claimed:
                return []
            if self._signal_key is None:
                self._signal_key = deployment_repo.key(conn, secrets.SIGNAL_KEY)
            nodes = node_repo.get_nodes(conn, [a.node_id for a in claimed if a.node_id])
            runs = [(a, DeployInputs.from_json(a.inputs)) for a in claimed]  # read once, typed
            rows = deployment_repo.rows_for(
                conn, [(a.node_id or "", run.deployment) for a, run in runs]
            )
            out: list[_Claimed] = []
            publish: list[Publish] = []
            events: list[NewEvent] = []
            for a, run in runs:
                node = nodes.get(a.node_id or "")
                row = rows.get((a.node_id or "", run.deployment))
                settled: DeploymentRow | None = None
                if row is not None and row.action_id == a.id:
                    if row.status in _TERMINAL_ROW:
                        settled = row  # its run ended before the engine that ran it died
                elif (
                    row is not None
                    and row.digest == run.digest
                    and row.status is DeploymentStatus.COMPLETE
                ):
                    settled = row  # already done with exactly these inputs: never twice
                elif node is not None and node.cluster_id is not None:
                    publish.append(self._publication(a, run, node))
                    events.append(
                        node_event(
                            project_id=a.project_id,
                            cluster_id=a.cluster_id,
                            node_id=node.id,
                            name=node.name,
                            status="DEPLOYING",
                            message=f"deployment {run.deployment} {run.action} started"
                            + (f" (attempt {a.attempts})" if a.attempts > 1 else ""),
                            action_id=a.id,
                        )
                    )
                out.append(_Claimed(a, run, node, settled))
            deployment_repo.publish(conn, publish, now, rows)
            add_events(conn, events, now)
            return out

    def _publication(self, a: ActionRecord, run: DeployInputs, node: NodeRecord) -> Publish:
        return publication(run, node, a.id, a.project_id, self.signal_hash(a.id))

    # -- running -------------------------------------------------------------------------------

    def signal_hash(self, run_id: str) -> str:
        return secrets.digest_of(secrets.derive(self.signal_key(), run_id))

    def signal_key(self) -> str:
        if self._signal_key is None:
            with self.engine.db.transaction() as conn:
                self._signal_key = deployment_repo.key(conn, secrets.SIGNAL_KEY)
        return self._signal_key

    def runner(self) -> DeploymentRunner | None:
        p = self.engine.provider
        return p.deployments if isinstance(p, RunsDeployments) else None

    async def _run(self, c: _Claimed) -> None:
        try:
            outcome = await self._outcome(c)
        except asyncio.CancelledError:
            self._running.discard(c.action.id)
            raise
        except Exception as e:  # a bug must still end the action, not leave it RUNNING forever
            log.exception("deployment action %s crashed", c.action.id)
            outcome = _failed(c, f"internal error: {e!r}")
        self._done.append(outcome)
        self.engine.wake()

    async def _outcome(self, c: _Claimed) -> _Outcome:
        if c.settled is not None:
            row = c.settled
            return _Outcome(c, None, row.status, row.status_code, row.stderr)
        if c.node is None or c.node.deleted_at is not None:
            return _failed(c, "the node is gone")
        runner = self.runner()
        if runner is not None:
            return await self._simulate(c, runner)
        return await self._await_signal(c)

    async def with_metadata_url(self, action: ActionRecord) -> ActionRecord:
        """A NODE_CREATE of a server in a cluster with software, given the URL its agents poll
        (`metadata_url` in its inputs, read by `nodework`); other actions as they are."""
        if self.agent_url is None or action.node_id is None or action.cluster_id is None:
            return action
        profile = action.inputs.get("profile")
        if isinstance(profile, dict) and profile.get("type") == "volume":
            return action
        key = action.parent_id or action.id
        known = self._has_software.get(key)
        if known is None:
            # One read per cluster action, shared: the thousands of node creates a large create
            # starts at once all ask before the first answer is in (issue 23: each read the
            # cluster's row, its whole document, again).
            if len(self._has_software) >= 10_000:
                self._has_software.clear()
            known = asyncio.ensure_future(asyncio.to_thread(self._declares, action.cluster_id))
            self._has_software[key] = known
        try:
            # Answered already (every create but the first few): no shield, no wait.
            done = known.done() and not known.cancelled() and known.exception() is None
            declares = known.result() if done else await asyncio.shield(known)
        except Exception:
            if self._has_software.get(key) is known:
                del self._has_software[key]  # the next create of this action reads again
            raise
        if not declares:
            return action
        url = Urls(self.agent_url).metadata(
            action.node_id, await asyncio.to_thread(self._server_secret, action.node_id)
        )
        return dataclasses.replace(action, inputs={**action.inputs, "metadata_url": url})

    async def _ensure_agents(self) -> None:
        """Servers made before their cluster had software were created without a metadata URL
        and run no agents: where the provider can start agents on a running server (local),
        give them theirs (a no-op for servers whose agents already poll that URL)."""
        p = self.engine.provider
        if self.agent_url is None or not isinstance(p, StartsAgents):
            return
        for node_id, provider_id in await asyncio.to_thread(self._servers_with_software):
            url = Urls(self.agent_url).metadata(
                node_id, await asyncio.to_thread(self._server_secret, node_id)
            )
            try:
                if await p.start_agents(provider_id, url):
                    log.info("started the agents of server %s (node %s)", provider_id, node_id)
            except ProviderError as e:
                log.warning("could not start the agents of node %s: %s", node_id, e)

    def _servers_with_software(self) -> list[tuple[str, str]]:
        """(node id, provider id) of the running servers of settled clusters with software."""
        out: list[tuple[str, str]] = []
        with self.engine.db.reading() as conn:
            for c in cluster_repo.list_clusters_cached(conn, self._clusters):
                if c.status not in SETTLED or not self.mine(c.id):
                    continue
                try:
                    software = self.software_of(c)
                except Exception:  # e.g. the inventory not read yet: the next pass looks again
                    log.exception("reading the software of %s failed", c.name)
                    continue
                if not self._wants_agents(c, software):
                    continue
                out += [
                    (n.id, n.provider_id)
                    for n in deployment_repo.current_servers(conn, c.id)
                    if n.provider_id is not None and n.status in RUNNABLE_NODE
                ]
        return out

    def _declares(self, cluster_id: str) -> bool:
        with self.engine.db.reading() as conn:
            cluster = cluster_repo.get_cluster(conn, cluster_id)
        if cluster is None:
            return False
        return self._wants_agents(cluster, self.software_of(cluster))

    def _wants_agents(self, cluster: ClusterRecord, software: SoftwareSpec | None) -> bool:
        """Whether the cluster's servers need their agents: it has deployments, or workloads
        whose replicas the agents carry (engine/agent_replicas.py)."""
        if software is not None and software.deployments:
            return True
        return carried_by_agents(self.engine.provider) and bool(self.workloads_of(cluster))

    def _server_secret(self, node_id: str) -> str:
        if self._server_key is None:
            with self.engine.db.transaction() as conn:
                self._server_key = deployment_repo.key(conn, secrets.SERVER_KEY)
        return secrets.derive(self._server_key, node_id)

    async def before_delete(self, action: ActionRecord) -> None:
        """Run the DELETE deployments of the node `action` is about to delete (see removal)."""
        await run_removals(self, action)

    async def _simulate(self, c: _Claimed, runner: DeploymentRunner) -> _Outcome:
        assert c.node is not None
        run = DeploymentRun(
            node=c.node.name,
            provider_id=c.node.provider_id,
            deployment=c.run.deployment,
            action=c.run.action,
            hook=c.run.hook,
            inputs=c.run.inputs,
            outputs=c.run.outputs,
        )
        try:
            signal = await asyncio.wait_for(runner.run(run), c.run.timeout_s)
        except TimeoutError:
            return _failed(c, f"no signal within {c.run.timeout_s:g} s")
        return _from_signal(c, signal)

    async def _await_signal(self, c: _Claimed) -> _Outcome:
        started = c.action.started_at or self.engine.clock.now()
        row = await self.wait_row(c.action.id, started + c.run.timeout_s)
        if isinstance(row, str):
            return _failed(c, row)
        return _Outcome(c, None, row.status, row.status_code, row.stderr)

    async def wait_row(self, run_id: str, deadline: float) -> DeploymentRow | str:
        """The run's row once its signal arrived, or why it never will (its time ran out, its
        node is gone)."""
        fut: asyncio.Future[DeploymentRow | str] = asyncio.get_running_loop().create_future()
        self._waiting[run_id] = (deadline, fut)
        self.engine.wake()
        try:
            return await fut
        finally:
            self._waiting.pop(run_id, None)

    def _poll_signals(self, now: float) -> None:
        """Resolve the runs whose signal arrived (their row ended) or whose time ran out."""
        waiting = dict(self._waiting)
        with self.engine.db.reading() as conn:
            rows = deployment_repo.by_actions(conn, waiting)
            nodes = node_repo.get_nodes(conn, {r.node_id for r in rows.values()})
        for action_id, (deadline, fut) in waiting.items():
            if fut.done():
                continue
            row = rows.get(action_id)
            node = nodes.get(row.node_id) if row is not None else None
            answer: DeploymentRow | str | None = None
            if row is not None and row.status in _TERMINAL_ROW:
                answer = row
            elif row is None or node is None or node.deleted_at is not None:
                answer = "the node is gone"
            elif now >= deadline:
                answer = "no signal in time (the deployment's timeout_s)"
            if answer is not None:
                fut.get_loop().call_soon_threadsafe(_resolve, fut, answer)

    # -- finishing -----------------------------------------------------------------------------

    def _finish(self, batch: list[_Outcome]) -> None:
        e = self.engine
        now = e.clock.now()
        with e.db.transaction() as conn:
            deployment_repo.finish(conn, [o.finish for o in batch if o.finish is not None], now)
            done = set(
                action_repo.complete(
                    conn,
                    [
                        Completion(
                            o.claimed.action.id,
                            ActionStatus.SUCCEEDED
                            if o.status is DeploymentStatus.COMPLETE
                            else ActionStatus.FAILED,
                            _reason(o),
                            {"status_code": o.status_code},
                        )
                        for o in batch
                    ],
                    e.owner,
                    now,
                )
            )
            mine = [o for o in batch if o.claimed.action.id in done]
            nodes = node_repo.get_nodes(conn, [o.claimed.node.id for o in mine if o.claimed.node])
            updates: list[NodeChange] = []
            events: list[NewEvent] = []
            clusters: set[str] = set()
            for o in mine:
                n = nodes.get(o.claimed.node.id) if o.claimed.node else None
                a = o.claimed.action
                ok = o.status is DeploymentStatus.COMPLETE
                events.append(
                    node_event(
                        project_id=a.project_id,
                        cluster_id=a.cluster_id,
                        node_id=a.node_id or "",
                        name=o.claimed.run.node,
                        status="DEPLOY_COMPLETE" if ok else "DEPLOY_FAILED",
                        message=_reason(o),
                        action_id=a.id,
                        level="INFO" if ok else "ERROR",
                    )
                )
                if n is None or n.deleted_at is not None:
                    continue
                if not ok and n.status is NodeStatus.ACTIVE:
                    updates.append(
                        NodeChange(n.id, now, status=NodeStatus.WARNING, status_reason=_reason(o))
                    )
                elif (
                    ok
                    and n.status is NodeStatus.WARNING
                    and n.status_reason.startswith(REASON_PREFIX)
                ):
                    updates.append(
                        NodeChange(n.id, now, status=NodeStatus.ACTIVE, status_reason="")
                    )
                else:
                    continue
                if n.cluster_id is not None:
                    clusters.add(n.cluster_id)
            node_repo.update_nodes(conn, updates)
            add_events(conn, events, now)
            for cid in clusters:
                _resettle(conn, cid, now)
        for o in mine:  # issue 27: on the bus, once written
            run = o.claimed.run
            notifications.deployment(
                self.notifier,
                o.claimed.action,
                run.deployment,
                run.node,
                str(run.action),
                run.config,
                ok=o.status is DeploymentStatus.COMPLETE,
                status_code=o.status_code,
            )


def _resolve(fut: asyncio.Future[DeploymentRow | str], answer: DeploymentRow | str) -> None:
    if not fut.done():
        fut.set_result(answer)


def _failed(c: _Claimed, why: str) -> _Outcome:
    return _Outcome(
        c,
        Finish(c.action.id, DeploymentStatus.FAILED, None, "", why),
        DeploymentStatus.FAILED,
        None,
        why,
    )


def _from_signal(c: _Claimed, signal: DeploymentSignal) -> _Outcome:
    status = DeploymentStatus.COMPLETE if signal.status_code == 0 else DeploymentStatus.FAILED
    outputs = with_heat_outputs(
        signal.outputs,
        signal.status_code,
        deployment_repo.tail(signal.stdout),
        deployment_repo.tail(signal.stderr),
    )
    finish = Finish(c.action.id, status, signal.status_code, signal.stdout, signal.stderr, outputs)
    return _Outcome(c, finish, status, signal.status_code, signal.stderr)


def _reason(o: _Outcome) -> str:
    name = o.claimed.run.deployment
    if o.status is DeploymentStatus.COMPLETE:
        return f"{REASON_PREFIX}{name} {o.claimed.run.action} complete"
    code = f" (exit {o.status_code})" if o.status_code is not None else ""
    tail = o.stderr.strip()[-300:]
    return f"{REASON_PREFIX}{name} {o.claimed.run.action} failed{code}" + (
        f": {tail}" if tail else ""
    )


def _resettle(conn: Any, cluster_id: str, now: float) -> None:
    """Judge a settled, unlocked cluster again after its nodes' deployment status changed."""
    c = cluster_repo.get_cluster(conn, cluster_id)
    if c is None or c.status not in SETTLED or c.lock_action_id is not None:
        return
    status, why = settled_status(node_repo.list_nodes(conn, c.id), declared_nodes(c.document))
    if status is not c.status or why != c.status_reason:
        cluster_repo.set_status(conn, c.id, status, why, now)


RunStep = Callable[[], Awaitable[bool]]

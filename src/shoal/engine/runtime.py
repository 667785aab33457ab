"""The engine's loops: claim work, run it, write results in batches, keep leases alive.

Four asyncio tasks share one engine:
- *parents*: claims cluster-level actions, plans them (see `planner`), and closes them when all
  their children are done;
- *children*: claims node-level actions up to the concurrency limit and runs each as a task;
- *flush*: writes finished children in one transaction per batch (action, node, events,
  dependents made ready), which is what lets one engine keep thousands of calls in flight;
- *heartbeat*: extends the lease of everything this engine holds.
Database calls are synchronous SQLAlchemy run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from shoal.clock import Clock, SystemClock
from shoal.engine import notifications, rolling
from shoal.engine.context import EngineContext
from shoal.engine.contracts import ClusterOutputs, Finish, NodeUpdate
from shoal.engine.events import action_event, child_node_event
from shoal.engine.manager import Manager
from shoal.engine.networks import ServerPorts
from shoal.engine.nodework import NodeOutcome, RetryPolicy, run_node_action
from shoal.engine.planner import finish_action, plan_action
from shoal.engine.software.decide import SoftwareOf
from shoal.engine.software.runner import Deployer
from shoal.engine.software.source import DocumentSoftware
from shoal.model.enums import ActionKind, ActionStatus, NodeStatus
from shoal.model.inventory import Inventory
from shoal.providers.base import Provider
from shoal.store import actions as action_repo
from shoal.store import engines as engine_repo
from shoal.store import nodes as node_repo
from shoal.store.actions import Completion
from shoal.store.counts import fold_counts
from shoal.store.database import Database
from shoal.store.events import NewEvent, add_events
from shoal.store.records import ActionRecord, NodeChange
from shoal.store.wakeups import Listener
from shoal.telemetry import metrics, requestid
from shoal.telemetry.notify import Notifier, Silent

log = logging.getLogger("shoal.engine")
T = TypeVar("T")

_STARTED_NODE_STATUS = {
    ActionKind.NODE_CREATE: NodeStatus.CREATING,
    ActionKind.NODE_DELETE: NodeStatus.DELETING,
    ActionKind.NODE_REBOOT: NodeStatus.RECOVERING,
    ActionKind.NODE_REBUILD: NodeStatus.RECOVERING,
}


def _always() -> bool:
    return True


_WORK_SEEN_S = 0.5
"""How long one count of the node work waiting and running serves this engine's claims
(issue 23: two counts before every claim were 4 % of a busy engine's CPU). Claims count
themselves off it, and an empty claim or a count of none reads again, so work is never left
waiting on a stale count; only the share may lag this long behind other engines' claims."""


@dataclasses.dataclass(slots=True)
class _WorkSeen:
    """One count of the node work for `_fair_claim`."""

    at: float
    """time.monotonic() when read: a cost's window, not the engine clock's time."""
    engines: int
    total: int
    """Runnable and running node actions, all engines'."""
    pending: int
    """Of those runnable, less what this engine claimed since."""


def _crashed(action: ActionRecord, e: Exception) -> NodeOutcome:
    """A node action that raised what no provider call should (a full disk under the cloud's
    files, a bug): FAILED, and its node ERROR with the reason, as a provider's failure leaves
    it (issue 39, item 4: left CREATING, a never-made node was neither converged nor repaired,
    and its cluster stayed WARNING after the disk was freed)."""
    reason = f"internal error: {e!r}"
    update = None
    if action.kind is not ActionKind.BARRIER and action.node_id:
        update = NodeUpdate(NodeStatus.ERROR, reason)
    return NodeOutcome(action, ActionStatus.FAILED, reason, node_update=update, node_message=reason)


class Engine:
    """One engine process's worth of workers over a shared store."""

    def __init__(
        self,
        db: Database,
        provider: Provider,
        *,
        clock: Clock | None = None,
        concurrency: int = 1000,
        lease_s: float = 30.0,
        poll_s: float = 0.05,
        idle_poll_s: float = 1.0,
        retry: RetryPolicy | None = None,
        engine_id: str | None = None,
        flush_batch: int = 2000,
        manage: bool = True,
        manage_tick_s: float = 1.0,
        reconcile_s: float = 5.0,
        software_of: SoftwareOf | None = None,
        stop_grace_s: float = 15.0,
        repair_attempts: int = 5,
        repair_backoff_s: float = 5.0,
    ) -> None:
        self.db = db
        self.stop_grace_s = stop_grace_s
        """How long `stop` lets running provider calls finish before it abandons them."""
        self.provider = provider
        self.clock = clock or SystemClock()
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.idle_poll_s = max(poll_s, idle_poll_s)
        """How often an idle engine looks for work while its database tells it of new work
        (PostgreSQL's NOTIFY, `store/wakeups.py`): only for leases that ran out."""
        self.retry = retry or RetryPolicy()
        self.id = engine_id or f"engine-{uuid.uuid4().hex[:12]}"
        self.flush_batch = flush_batch
        self._inflight = 0
        self._done: list[NodeOutcome] = []
        self._parents: set[str] = set()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flush_wake = asyncio.Event()
        self._slot_free = asyncio.Event()
        self._stopping = False
        self._stop: asyncio.Task[None] | None = None
        """The stop under way: `shoal server` begins it at SIGTERM, beside the HTTP drain, and
        the app's lifespan then waits for the same one (issue 29: a bounded stop)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._children: set[asyncio.Task[None]] = set()
        self._work_seen: _WorkSeen | None = None
        self._inventory: Inventory | None = None
        self._notifier: Notifier = Silent()
        self._listener = Listener(db, self.wake)
        self.context = EngineContext(
            db=db,
            provider=provider,
            clock=self.clock,
            owner=self.id,
            inventory=self.inventory,
            refresh_inventory=self.refresh_inventory,
            wake=self.wake,
            call_timeout_s=self.retry.call_timeout_s,
        )
        self.manager = (
            Manager(
                self.context,
                tick_s=manage_tick_s,
                reconcile_s=reconcile_s,
                lease_s=max(lease_s, 3.0),
                repair_attempts=repair_attempts,
                repair_backoff_s=repair_backoff_s,
            )
            if manage
            else None
        )
        self.managed_through = -math.inf
        """The engine-clock time at which the last finished management pass began: a test
        that moves the clock to T waits for this to reach T, then knows the manager has looked
        at the cluster as of T (instead of sleeping and hoping it did)."""
        # Software deployments (issue 11): their own loop, see engine/software/runner.py.
        source = DocumentSoftware(self.inventory_now)
        self.server_ports = ServerPorts(self.context)  # issue 26: ports before a server boots
        self.deployer = Deployer(
            self.context,
            software_of or source,
            policies_of=source.update_policies,
            health_of=source.health_policies,
            workloads_of=source.workloads,
            lease_s=self.lease_s,
        )

    @property
    def notifier(self) -> Notifier:
        """Notifications on the bus (issue 27); the runtime sets a `BusNotifier` if configured."""
        return self._notifier

    @notifier.setter
    def notifier(self, notifier: Notifier) -> None:
        self._notifier = notifier
        self.deployer.notifier = notifier

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self._stopping = False
        self._stop = None
        self._loop = asyncio.get_running_loop()
        await self._db(self._beat)  # registered at once: the others count it in their shares
        self._listener.start()
        self._tasks = [
            asyncio.create_task(
                self._forever(self._parents_once, backoff=_always), name="shoal-parents"
            ),
            asyncio.create_task(
                self._forever(self._children_once, backoff=_always), name="shoal-children"
            ),
            asyncio.create_task(self._forever(self._flush_once), name="shoal-flush"),
            asyncio.create_task(self._forever(self._heartbeat_once), name="shoal-heartbeat"),
            asyncio.create_task(
                self._forever(self.deployer.once, backoff=lambda: self.deployer.idle),
                name="shoal-deployer",
            ),
        ]
        if self.manager is not None:
            self._tasks.append(
                asyncio.create_task(self._forever(self._manage_once), name="shoal-manager")
            )

    async def stop(self) -> None:
        """Stop claiming; let running provider calls finish and write their results.

        A call still running after `stop_grace_s` (a slow cloud, a hung provider) is abandoned:
        its action stays RUNNING under this engine's lease, which runs out, and another engine
        takes it over as after a crash (creates are idempotent by node id). Stopping never
        waits on a provider without bound. Called again (or while stopping), it waits for the
        same stop."""
        if self._stop is None:
            self._stop = asyncio.ensure_future(self._stop_now())
        await asyncio.shield(self._stop)

    async def _stop_now(self) -> None:
        self._stopping = True
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await t
        if self._children:
            _, pending = await asyncio.wait(set(self._children), timeout=self.stop_grace_s)
            for t in pending:
                t.cancel()
            if pending:
                log.warning(
                    "stopping: %d provider call(s) abandoned to lease takeover", len(pending)
                )
                await asyncio.gather(*pending, return_exceptions=True)
        while self._done:  # what finished is written; nothing to wait for when nothing did
            await self._flush_once()
        await self.deployer.close()
        self._tasks = []
        if self.manager is not None:
            await self.manager.close()
        self._listener.stop()
        await self._db(engine_repo.unregister, self.db, self.id)

    def wake(self) -> None:
        """New work was submitted in this process: look now instead of at the next poll.

        Safe from any thread: the service submits from FastAPI's thread pool, and an
        asyncio.Event set off its loop races the waiter's timeout (InvalidStateError, a 500 under
        load), so another thread hands the set to the loop."""
        loop = self._loop
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if loop is None or here is loop:
            self._wake.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._wake.set)

    async def inventory(self) -> Inventory:
        if self._inventory is None:
            self._inventory = await self.provider.inventory()
        return self._inventory

    def inventory_now(self) -> Inventory:
        """The inventory last read (for synchronous callers); read it with `inventory` first."""
        if self._inventory is None:
            raise RuntimeError("the engine has not read the provider's inventory yet")
        return self._inventory

    async def refresh_inventory(self) -> Inventory:
        """Read the provider's inventory again (hosts fail and recover). The old one stays in
        place until the new one is read, so synchronous readers never find none."""
        self._inventory = await self.provider.inventory()
        return self._inventory

    async def _forever(
        self, step: Callable[[], Awaitable[bool]], backoff: Callable[[], bool] = lambda: False
    ) -> None:
        """Run `step` until stopped, waiting for a wake-up (or the idle poll) whenever it found
        nothing. While `backoff()` (the claim loops, which NOTIFY wakes; the deployer with
        nothing to time), each further empty look waits twice as long, up to `_idle_max_s`:
        what the timeout finds alone are leases that ran out."""
        quiet = 0
        while not self._stopping:
            try:
                busy = await step()
            except asyncio.CancelledError:
                raise
            except Exception:
                # A database hiccup must not kill the engine; the lease model makes a retry safe.
                log.exception("engine step failed; retrying")
                busy = False
            if busy or await self._idle(quiet if backoff() else 0):
                quiet = 0
            else:
                quiet += 1

    @property
    def _poll_now_s(self) -> float:
        return self.idle_poll_s if self._listener.healthy else self.poll_s

    @property
    def _idle_max_s(self) -> float:
        """The longest idle wait of a claim loop while NOTIFY wakes it: a lease that ran out
        is taken over at most this much later than at the short poll (a third of the lease,
        at most 4 s; issue 23: looking every second was most of an idle engine's CPU)."""
        return max(self.idle_poll_s, min(4.0, self.lease_s / 3))

    async def _idle(self, quiet: int = 0) -> bool:
        """Wait for a wake-up or the poll; whether woken. After `quiet` empty looks in a row,
        and only while the database wakes this engine, the wait is longer (doubled each)."""
        wait = await self._idle_wait_s(quiet)
        woken = True
        try:
            await asyncio.wait_for(self._wake.wait(), wait)
        except TimeoutError:
            woken = False
        self._wake.clear()
        return woken

    async def _idle_wait_s(self, quiet: int) -> float:
        """How long `_idle` waits. A long wait ends when another engine's lease runs out
        (one read, only before a wait longer than the short poll): a dead engine's work is
        taken over then, not up to `_idle_max_s` later, while an engine with nothing to
        take over still sleeps long."""
        wait = self._poll_now_s
        if quiet and self._listener.healthy:
            wait = min(self._idle_max_s, wait * 2 ** min(quiet, 8))
            if wait > self.idle_poll_s:
                wait = min(wait, await self._until_takeover_s())
        return wait

    _next_expiry: tuple[float, float | None] = (-math.inf, None)
    """(read at, the first lease of another engine to run out then): shared by the loops."""

    async def _until_takeover_s(self) -> float:
        now = self.clock.now()
        read_at, expiry = self._next_expiry
        # A lease taken after the read runs out at least a lease later (claims and heartbeats
        # set now + lease), so one read serves every idle loop for `_idle_max_s` (a third of
        # a lease): the parents', children's and deployer's loops make one read, not three.
        if now - read_at >= self._idle_max_s or (expiry is not None and expiry <= now):
            try:
                expiry = await self._db(self._next_lease_expiry, now)
            except Exception:
                log.exception("reading the next lease to run out failed; idling as before")
                return math.inf
            self._next_expiry = (now, expiry)
        if expiry is None:
            return math.inf
        # Just past it: a claim takes a lease that ran out strictly before its `now`.
        return max(self.poll_s, expiry - now + self.poll_s)

    def _next_lease_expiry(self, now: float) -> float | None:
        with self.db.reading() as conn:
            return action_repo.next_lease_expiry(conn, self.id, now)

    async def _db(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.context.run_in_thread(fn, *args)

    # -- cluster-level actions -----------------------------------------------------------------

    async def _parents_once(self) -> bool:
        claimed = await self._db(self._claim, 16, False)
        for a in claimed:
            self._parents.add(a.id)
            await self._notify_cluster(a, started=True)
        busy = bool(claimed)
        held = list(self._parents)
        now = await self._db(self._parents_now, held)
        for action_id in held:
            busy |= await self._advance_parent(action_id, now.get(action_id))
        requestid.current.set(None)
        return busy

    def _parents_now(self, ids: list[str]) -> dict[str, tuple[ActionRecord, int]]:
        with self.db.reading() as conn:
            return action_repo.parents_at(conn, ids)

    async def _advance_parent(self, action_id: str, now: tuple[ActionRecord, int] | None) -> bool:
        """One step of a cluster action held: plan it, or close it once its children ended.
        `now`: the action as this pass read it, with its children READY or RUNNING
        (`parents_at`)."""

        def current() -> ActionRecord | None:
            with self.db.reading() as conn:
                return action_repo.get_action(conn, action_id)

        action = now[0] if now is not None else None
        if action is None or action.owner != self.id or action.status.is_terminal:
            self._parents.discard(action_id)
            return False
        planned = ClusterOutputs.from_json(action.outputs).planned
        if planned and now is not None and now[1] and not action.cancel_requested:
            return False  # children still to run: nothing to finish (read for all at once)
        # Issue 27: its log lines, and the children it plans, carry its request's id.
        requestid.current.set(action.request_id)
        if not planned:
            inventory = await self.inventory()
            outcome = await self._db(
                plan_action, self.db, action, inventory, self.id, self.clock.now()
            )
            if not outcome.planned:
                self._parents.discard(action_id)
                await self._ended(await self._db(current))
            self._wake.set()
            return True
        final = await self._db(finish_action, self.db, action_id, self.id, self.clock.now())
        if final is Finish.NEXT_STAGE:
            return await rolling.advance(self.context, action)
        if final is Finish.CLOSED:
            self._parents.discard(action_id)
            await self._ended(await self._db(current))
            self.deployer.wake()  # issue 11: nodes changed; deployments may be due
            return True
        return False

    async def _notify_cluster(self, action: ActionRecord, *, started: bool) -> None:
        if self.notifier.enabled and (action.attempts <= 1 or not started):
            await self.context.run_in_thread(
                notifications.cluster_action, self.notifier, self.db, action, started=started
            )

    async def _ended(self, action: ActionRecord | None) -> None:
        """Issue 27: a cluster-level action's end, in shoal_actions / its duration histogram,
        and on the bus."""
        if action is None or not action.status.is_terminal:
            return
        await self._notify_cluster(action, started=False)
        took = (
            action.ended_at - action.started_at if action.ended_at and action.started_at else None
        )
        metrics.action_ended(str(action.kind), str(action.status), took)

    @property
    def inflight(self) -> int:
        """Node-level actions running now (a gauge of /metrics)."""
        return self._inflight

    # -- node-level actions --------------------------------------------------------------------

    def _claim(self, limit: int, node_level: bool) -> list[ActionRecord]:
        now = self.clock.now()
        if node_level:
            limit = min(limit, self._fair_claim(now))
            if limit <= 0:
                return []
        try:
            return self._claim_now(now, limit, node_level)
        except BaseException:
            self._work_seen = None
            raise

    def _claim_now(self, now: float, limit: int, node_level: bool) -> list[ActionRecord]:
        with self.db.transaction() as conn:
            claimed = action_repo.claim(
                conn,
                owner=self.id,
                now=now,
                lease_s=self.lease_s,
                limit=limit,
                node_level=node_level,
                skip_locked=not self.db.is_sqlite,
            )
            for a in claimed:
                if a.attempts > 1:  # its engine's lease ran out (issue 27's takeover count)
                    metrics.ACTION_TAKEOVERS.labels(str(a.kind)).inc()
            if not node_level:
                add_events(
                    conn,
                    [action_event(a, "RUNNING", f"claimed by {self.id}") for a in claimed],
                    now,
                )
                return claimed
            updates: list[NodeChange] = []
            events: list[NewEvent] = []
            for a in claimed:
                status = _STARTED_NODE_STATUS.get(a.kind)
                retry = f" (attempt {a.attempts})" if a.attempts > 1 else ""
                # `StepLabel.from_json(a.inputs).host`, without a frozen object per node (issue
                # 23); `child_node_event` reads the node's name alike.
                host = a.inputs.get("host")
                where = str(host) if host else "its host"
                event = child_node_event(a, str(status), f"{a.kind} started on {where}{retry}")
                if status is None or event is None or a.node_id is None:
                    continue
                updates.append(NodeChange(a.node_id, now, status=status))
                events.append(event)
            node_repo.update_nodes(conn, updates)
            add_events(conn, events, now)
        self._claimed_work(len(claimed))
        return claimed

    def _fair_claim(self, now: float) -> int:
        """How many node actions this engine may claim now: its share of those runnable or
        running, over the live engines, less what it runs (issue 23: one engine took a whole
        1,000-node create while two others idled). Work that waits is never left unclaimed:
        when the others are full or gone, their share comes back as runnable work."""
        seen = self._work_seen
        if seen is None or seen.pending <= 0 or time.monotonic() - seen.at > _WORK_SEEN_S:
            with self.db.reading() as conn:
                engines = engine_repo.count_live(conn, now)
                if engines <= 1:
                    # Alone: no share to count (issue 23: counting every tick read all the
                    # running deployment runs too, a cost per tick that grew with the cluster).
                    self._work_seen = None
                    return 2000 if action_repo.claimable(conn, action_repo.NODE_KINDS, now) else 0
                pending, running = action_repo.node_work(conn, now)
            seen = self._work_seen = _WorkSeen(
                time.monotonic(), engines, pending + running, pending
            )
        share = -(-seen.total // seen.engines)
        # At least a small batch when anything waits, so a lopsided start still drains.
        return min(seen.pending, max(share - self._inflight, 16 if seen.pending else 0))

    def _claimed_work(self, claimed: int) -> None:
        """Count a node claim against the work last counted; an empty claim forgets the
        count (what it said waits was taken by others, or never was)."""
        seen = self._work_seen
        if seen is not None:
            seen.pending = seen.pending - claimed if claimed else 0

    async def _children_once(self) -> bool:
        free = self.concurrency - self._inflight
        if free <= 0:
            self._slot_free.clear()
            await self._slot_free.wait()
            return True
        claimed = await self._db(self._claim, min(free, 2000), True)
        if not claimed:
            return False
        inventory = await self.inventory()
        # Issue 23: once per claimed child, so the lookups are made once per batch.
        children, run, create_task = self._children, self._run_child, asyncio.create_task
        forget = children.discard
        for a in claimed:
            if a.kind is ActionKind.NODE_DELETE and a.cluster_id is not None:
                # Now DELETING: its server leaves the pools before it is stopped (issue 26).
                self.context.members.mark(a.cluster_id)
            if a.attempts <= 1:
                notifications.node_action(self.notifier, a, started=True)
            self._inflight += 1
            task = create_task(run(a, inventory))
            children.add(task)
            task.add_done_callback(forget)
        return True

    async def _run_child(self, action: ActionRecord, inventory: Inventory) -> None:
        requestid.current.set(action.request_id)  # this task's own context (issue 27)
        try:
            if action.kind is ActionKind.NODE_DELETE:
                await self._before_delete(action)
            elif action.kind is ActionKind.NODE_CREATE and self.deployer.agent_url is not None:
                # Issue 11: agents. Issue 23: without an agent URL the deployer gives the
                # action back as it is; not making the coroutine saves 3 % of a create's work.
                action = await self.deployer.with_metadata_url(action)
            ports = self.server_ports
            # Issue 23: a provider that makes no ports (sim, local) has no networking to give a
            # create, as `ServerPorts.of` would answer, without a coroutine per action.
            networking = await ports.of(action, inventory) if ports.enabled else None
            outcome = await run_node_action(
                action,
                self.provider,
                inventory,
                self.retry,
                self.clock,
                self._provider_ids,
                networking,
            )
            if outcome.status is ActionStatus.SUCCEEDED and action.kind is ActionKind.NODE_DELETE:
                # Issue 26; only a delete's ports are released (issue 23: no coroutine made
                # and run to learn so for every create).
                await self.server_ports.release(action, inventory)
        except Exception as e:  # a bug must still end the action, not leave it RUNNING forever
            log.exception("node action %s crashed", action.id)
            outcome = _crashed(action, e)
        finally:
            self._inflight -= 1
            self._slot_free.set()
        self._done.append(outcome)
        self._flush_wake.set()

    async def _before_delete(self, action: ActionRecord) -> None:
        """Issue 11: a node's DELETE deployments run before it goes; their failure is recorded
        by the deployer and does not stop the delete."""
        try:
            await self.deployer.before_delete(action)
        except Exception:
            log.exception("DELETE deployments before %s failed; deleting anyway", action.id)

    async def _provider_ids(self, node_ids: list[str]) -> dict[str, str | None]:
        def read() -> dict[str, str | None]:
            with self.db.reading() as conn:
                return {k: v.provider_id for k, v in node_repo.get_nodes(conn, node_ids).items()}

        return await self._db(read)

    # -- writing results -----------------------------------------------------------------------

    async def _flush_once(self) -> bool:
        if not self._done:
            # Only this process's node work fills `_done`, and it sets the event: the timeout
            # is a safety net, not a poll of the database.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flush_wake.wait(), self.idle_poll_s)
            self._flush_wake.clear()
            return True
        batch, self._done = self._done[: self.flush_batch], self._done[self.flush_batch :]
        try:
            changed = await self._db(self._write, batch)
        except Exception:
            self._done = batch + self._done
            raise
        for cluster_id in changed:  # issue 26: the manager re-syncs their networking now
            self.context.members.mark(cluster_id)
        self._wake.set()
        return True

    def _write(self, batch: list[NodeOutcome]) -> list[str]:
        """Record the batch; the clusters whose nodes changed status, in order."""
        now = self.clock.now()
        changed: dict[str, None] = {}
        with self.db.transaction() as conn:
            finished = set(
                action_repo.complete(
                    conn,
                    [
                        Completion(o.action.id, o.status, o.reason, o.outputs.to_json())
                        for o in batch
                    ],
                    self.id,
                    now,
                )
            )
            updates: list[NodeChange] = []
            events: list[NewEvent] = []
            for o in batch:
                a = o.action
                if a.id not in finished:
                    continue  # our lease ran out and someone else took it over
                if a.kind is ActionKind.BARRIER:
                    continue
                level = "INFO" if o.status is ActionStatus.SUCCEEDED else "ERROR"
                if o.node_update is not None and a.node_id:
                    updates.append(o.node_update.change(a.node_id, now))
                    if o.node_update.status is not None and a.cluster_id is not None:
                        changed[a.cluster_id] = None
                event = child_node_event(
                    a,
                    str(
                        o.node_update.status if o.node_update and o.node_update.status else o.status
                    ),
                    o.node_message or o.reason or str(o.status),
                    level,
                )
                if event is not None:
                    events.append(event)
            node_repo.update_nodes(conn, updates)
            add_events(conn, events, now)
        took: dict[tuple[str, str], list[float | None]] = {}
        for o in batch:
            if o.action.id in finished:
                start = o.action.started_at
                took.setdefault((o.action.kind, o.status), []).append(
                    now - start if start else None
                )
                if self.notifier.enabled:
                    ended = dataclasses.replace(
                        o.action, status=o.status, status_reason=o.reason, ended_at=now
                    )
                    notifications.node_action(
                        self.notifier,
                        ended,
                        started=False,
                        status=str(o.node_update.status or "") if o.node_update else "",
                        physical_id=o.outputs.provider_id,
                    )
        for (kind, result), seconds in took.items():
            metrics.actions_ended(kind, result, seconds)
        return list(changed)

    # -- active management ---------------------------------------------------------------------

    async def _manage_once(self) -> bool:
        assert self.manager is not None
        began = self.clock.now()
        await self.manager.tick()
        self.managed_through = began
        await self._until_next_tick()
        return True

    async def _until_next_tick(self) -> None:
        """The manager's tick period, or less when a replica's container exits meanwhile (its
        keeper restarts a first exit at once: issue 36, model/restarts.py)."""
        assert self.manager is not None
        rest = asyncio.ensure_future(self.clock.sleep(self.manager.tick_s))
        exited = asyncio.ensure_future(self.manager.workloads.exited())
        try:
            await asyncio.wait({rest, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (rest, exited):
                t.cancel()
            ended = await asyncio.gather(rest, exited, return_exceptions=True)
        if isinstance(ended[1], Exception):  # (a watch that failed: the tick period holds)
            log.warning("watching replicas' exits failed: %s", ended[1])

    # -- leases --------------------------------------------------------------------------------

    async def _heartbeat_once(self) -> bool:
        await self.clock.sleep(self.lease_s / 3)
        await self._db(self._beat)
        return True

    def _beat(self) -> None:
        now = self.clock.now()
        with self.db.transaction() as conn:
            action_repo.heartbeat(conn, self.id, now, self.lease_s)
        engine_repo.register(self.db, self.id, now, self.lease_s)
        fold_counts(self.db)

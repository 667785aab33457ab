"""Liveness and readiness probes of workloads' replicas (issue 22, item 3), run by the keeper
(engine/workloads.py) once per manager tick on the engine's clock.

Kubernetes' semantics, in the document's fields (`period_s`, `timeout_s`, `failure_threshold`,
`initial_delay_s`): a probe first runs `initial_delay_s` after its container started, then every
`period_s`; `failure_threshold` failures in a row of a liveness probe restart the replica (its
containers started again on the same server, the restart counted, an event). Ready means the
readiness probe passed within its period: its first failure makes the replica not ready until a
probe passes again (Kubernetes waits `failureThreshold` failures; issue 36 asked for the truth
within one period). A replica of a workload with a
readiness probe is not ready from its start until its first readiness probe passes, which is
what `{members: WORKLOAD}` and the rollouts' batches wait for. The runtime runs each probe
(`ReplicaProber`: it knows the server's address and how to enter a container); on `sim` they
pass unless a failure is injected.

What a probe saw is kept in memory (per replica and start) and on the replica's row
(`ReplicaRow.probes`: each probe's consecutive failures, verdict and last result, tied to the
start they belong to), written only when one of those changes: failures are counted up to the
threshold, so a replica whose probes keep passing — or keep failing a readiness probe — writes
nothing. An engine restarted, or a new holder of the manager lease, takes the counts from the
row (so two failures of three before the move and one after restart the replica), and a keeper
whose memory differs from its row (another engine wrote it meanwhile) takes the row's. A row
without counts of its current start (never probed, or written before they were kept) keeps
the readiness it says until its next probe. Kubernetes' `successThreshold` is 1 (the only value
read), so one pass decides and no count of successes is kept beyond the last result.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from shoal.engine import workload_rollouts as rollouts
from shoal.engine.events import cluster_event
from shoal.model.workloads import Probe, Workload
from shoal.providers.errors import ProviderError
from shoal.providers.replicas import ReplicaProber, ReplicaRuntime, ReplicaState
from shoal.store.events import NewEvent
from shoal.store.records import ClusterRecord, NodeRecord
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ProbeCount, ProbeState, ReplicaRow

MAX_PARALLEL = 64
"""Probes in flight at once (each may wait its timeout)."""


def has_probes(w: Workload) -> bool:
    return any(c.liveness is not None or c.readiness is not None for c in w.containers)


def gates_readiness(w: Workload) -> bool:
    """Whether the workload's replicas are ready only once a readiness probe passed."""
    return any(c.readiness is not None for c in w.containers)


@dataclass(slots=True)
class _Check:
    container: str
    probe: Probe
    liveness: bool
    due: float
    failures: int = 0
    ok: bool = False
    """A readiness check's verdict: its last probe passed (False before the first pass)."""
    last: bool | None = None
    """The last result (None before the first probe of this start)."""

    def count(self) -> ProbeCount:
        return ProbeCount(self.container, self.liveness, self.failures, self.ok, self.last)


@dataclass(slots=True)
class _Track:
    started_at: float
    checks: list[_Check]

    @property
    def ready(self) -> bool:
        return all(c.ok for c in self.checks if not c.liveness)

    def state(self) -> ProbeState:
        """What the row keeps of it."""
        return ProbeState(self.started_at, tuple(c.count() for c in self.checks))

    def take(self, kept: ProbeState) -> None:
        """The counts another engine (or this one before a restart) kept on the row; a check
        not probed yet since this engine took it runs at once."""
        by = {(c.container, c.liveness): c for c in kept.checks}
        for c in self.checks:
            found = by.get((c.container, c.liveness))
            if found is None:
                continue
            c.failures = min(found.failures, c.probe.failure_threshold)
            c.ok = found.ok
            c.last = found.last


@dataclass(slots=True)
class ProbeOut:
    save: list[ReplicaRow] = field(default_factory=list)
    events: list[NewEvent] = field(default_factory=list)


class Probes:
    """The probes' schedule and counts, per cluster and replica key."""

    def __init__(self) -> None:
        self._tracks: dict[str, dict[str, _Track]] = {}

    def forget(self, cluster_id: str) -> None:
        self._tracks.pop(cluster_id, None)

    async def run(
        self,
        runtime: ReplicaRuntime,
        cluster: ClusterRecord,
        workloads: dict[str, Workload],
        rows: dict[str, ReplicaRow],
        states: dict[str, ReplicaState],
        keys: dict[str, str],
        live: dict[str, NodeRecord],
        rolls: dict[str, RolloutRow],
        now: float,
    ) -> ProbeOut:
        """One pass over the cluster's replicas as this tick left them (`rows`, replica ->
        row): the rows whose readiness changed or that were restarted, and the events."""
        out = ProbeOut()
        if not isinstance(runtime, ReplicaProber):
            return out
        prober: ReplicaProber = runtime
        old = self._tracks.get(cluster.id, {})
        tracks: dict[str, _Track] = {}
        due: list[tuple[str, _Check]] = []
        for replica, row in rows.items():
            w = workloads.get(row.workload)
            if w is None or not has_probes(w):
                continue
            key = keys[replica]
            started = row.started_at
            fresh = started == now
            if (
                started is None
                or row.not_before is not None
                or row.node not in live
                or (not fresh and states.get(key) is not ReplicaState.RUNNING)
            ):
                continue
            track = old.get(key)
            kept = (
                row.probes if row.probes is not None and row.probes.started_at == started else None
            )
            if track is None or track.started_at != started:
                # A replica found ready (by an engine before this one) stays so until its
                # next probe; one started this tick waits for its first pass. Counts kept on
                # the row go on (an engine restart, a lease that moved), probed at once.
                track = _new_track(w, started, ready=row.ready and not fresh)
                if kept is not None:
                    track.take(kept)
                    for c in track.checks:
                        if c.last is not None:
                            c.due = now
            elif kept is not None and kept != track.state():
                track.take(kept)  # another engine probed it meanwhile: its counts win
            tracks[key] = track
            due += [(replica, c) for c in track.checks if c.due <= now]
        self._tracks[cluster.id] = tracks
        limit = asyncio.Semaphore(MAX_PARALLEL)

        async def one(replica: str, c: _Check) -> bool:
            server = live[rows[replica].node]
            assert server.provider_id is not None
            async with limit:
                return await prober.probe(keys[replica], server.provider_id, c.container, c.probe)

        results = await asyncio.gather(*(one(r, c) for r, c in due)) if due else []
        dead: dict[str, _Check] = {}
        for (replica, c), ok in zip(due, results, strict=True):
            c.due = now + c.probe.period_s
            c.last = ok
            # Counted up to the threshold only: beyond it nothing changes, nothing is written.
            c.failures = 0 if ok else min(c.failures + 1, c.probe.failure_threshold)
            if c.liveness:
                if c.failures >= c.probe.failure_threshold:
                    dead[replica] = c
            else:
                # Ready means the probe passed within its period (issue 36: a replica that
                # stopped answering read ready for `failure_threshold` periods): the first
                # failure makes it not ready; the threshold is liveness's, before a restart.
                c.ok = ok
        for replica, row in rows.items():
            track = tracks.get(keys[replica])
            if track is None or replica in dead:
                continue
            ready = track.ready if gates_readiness(workloads[row.workload]) else row.ready
            state = track.state()
            if row.ready != ready or row.probes != state:  # only rows that changed
                out.save.append(replace(row, ready=ready, probes=state))
        for replica, c in dead.items():
            tracks.pop(keys[replica], None)
            row = rows[replica]
            w = workloads[row.workload]
            server = live[row.node]
            assert server.provider_id is not None
            template = rollouts.template_for(rolls[w.name], row.revision)
            restarts = row.restarts + 1
            try:
                await runtime.start_replica(keys[replica], server.provider_id, template)
            except ProviderError as e:
                out.save.append(replace(row, ready=False))
                out.events.append(
                    cluster_event(
                        cluster,
                        "WORKLOAD",
                        f"replica {replica} failed its liveness probe and could not be "
                        f"restarted: {e}",
                        level="WARNING",
                    )
                )
                continue
            out.save.append(
                replace(
                    row,
                    ready=not gates_readiness(w),
                    restarts=restarts,
                    started_at=now,
                    not_before=None,
                    revision=template.revision,
                    probes=None,
                )
            )
            out.events.append(
                cluster_event(
                    cluster,
                    "WORKLOAD",
                    f"replica {replica}'s container {c.container} failed its liveness probe "
                    f"{c.failures} times; restarted (restart {restarts})",
                    level="WARNING",
                )
            )
        return out


def _new_track(w: Workload, started_at: float, *, ready: bool) -> _Track:
    checks: list[_Check] = []
    for c in w.containers:
        for probe, liveness in ((c.liveness, True), (c.readiness, False)):
            if probe is not None:
                checks.append(
                    _Check(c.name, probe, liveness, started_at + probe.initial_delay_s, ok=ready)
                )
    return _Track(started_at, checks)

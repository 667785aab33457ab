"""The gauges one engine serves at `/metrics`, read from the database at scrape time (issue 27).

Counted metrics (actions ended, provider calls, placements...) are the process's own
(`shoal.telemetry.metrics`). What is a fact of the whole installation — nodes by status,
clusters, the action queue, deployments, rollouts — is in the shared database; with several
engines on one database each would report the same totals and a `sum()` would count them
several times. So only the engine holding the manager lease (one at a time) exports them; the
others export `shoal_cluster_gauges_exported 0` and omit them. With management off (no lease)
an engine exports them itself: run management on when several engines share a database.

A scrape never holds the engine: the counts are one read-only transaction in the scraping
thread (not the engine's loop), and the result is kept for `cache_s`, so a burst of scrapes is
one read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from shoal.clock import Clock
from shoal.store.database import Database
from shoal.store.observe import Snapshot, pool_use, snapshot
from shoal.telemetry.metrics import PROCESS


@dataclass(frozen=True, slots=True)
class EngineView:
    """What the collector needs to know of its engine, as callables read at scrape time."""

    engine_id: str
    manages: bool
    inflight: Callable[[], int]
    provider: str


class EngineCollector(Collector):
    def __init__(
        self,
        db: Database,
        clock: Clock,
        view: EngineView,
        *,
        by_project: bool = False,
        cache_s: float = 2.0,
    ) -> None:
        self.db = db
        self.clock = clock
        self.view = view
        self.by_project = by_project
        self.cache_s = cache_s
        self._lock = threading.Lock()
        self._cached: tuple[float, Snapshot] | None = None

    def _snapshot(self) -> Snapshot:
        with self._lock:  # concurrent scrapes share one read
            now = self.clock.now()
            if self._cached is not None and now - self._cached[0] < self.cache_s:
                return self._cached[1]
            with self.db.reading() as conn:
                snap = snapshot(conn, now, by_project=self.by_project)
            self._cached = (now, snap)
            return snap

    def collect(self) -> Iterator[Metric]:
        snap = self._snapshot()
        now = self.clock.now()
        held = snap.manager_holder == self.view.engine_id
        g = GaugeMetricFamily(
            "shoal_manager_lease_held",
            "1 if this engine holds the manager lease (health checks, repairs); sum over "
            "engines is 1 when some engine manages.",
        )
        g.add_metric([], 1.0 if held else 0.0)
        yield g
        g = GaugeMetricFamily(
            "shoal_engine_inflight_actions", "Node-level actions this engine has running now."
        )
        g.add_metric([], float(self.view.inflight()))
        yield g
        pool = pool_use(self.db)
        g = GaugeMetricFamily("shoal_db_pool_size", "Connections the database pool keeps.")
        g.add_metric([], float(pool.size))
        yield g
        g = GaugeMetricFamily(
            "shoal_db_pool_checked_out", "Database connections lent out by the pool now."
        )
        g.add_metric([], float(pool.checked_out))
        yield g
        exported = held or not self.view.manages
        g = GaugeMetricFamily(
            "shoal_cluster_gauges_exported",
            "1 if this engine exports the installation-wide gauges (it holds the manager lease).",
        )
        g.add_metric([], 1.0 if exported else 0.0)
        yield g
        if exported:
            yield from _installation(snap, now, self.view.provider, self.by_project)


def _installation(snap: Snapshot, now: float, provider: str, by_project: bool) -> Iterator[Metric]:
    g = GaugeMetricFamily(
        "shoal_actions_in_progress",
        "Actions not ended, by kind and status (INIT, READY, RUNNING ...).",
        labels=["kind", "status"],
    )
    for (kind, status), n in sorted(snap.actions.items()):
        g.add_metric([kind, status], float(n))
    yield g
    g = GaugeMetricFamily(
        "shoal_action_queue_depth", "Actions READY and waiting for an engine to claim them."
    )
    g.add_metric([], float(sum(n for (_, s), n in snap.actions.items() if s == "READY")))
    yield g
    g = GaugeMetricFamily(
        "shoal_action_oldest_waiting_seconds",
        "Age of the oldest READY action (0: none waits).",
    )
    g.add_metric([], max(0.0, now - snap.oldest_ready_at) if snap.oldest_ready_at else 0.0)
    yield g
    g = GaugeMetricFamily(
        "shoal_actions_lease_expired",
        "RUNNING actions whose lease ran out: their engine died or hangs (taken over soon).",
    )
    g.add_metric([], float(snap.lease_expired))
    yield g
    labels = ["status", "provider", *(["project"] if by_project else [])]
    g = GaugeMetricFamily("shoal_nodes", "Nodes by status and provider.", labels=labels)
    for (status, project), n in sorted(snap.nodes.items()):
        g.add_metric([status, provider, *([project] if by_project else [])], float(n))
    yield g
    for name, doc, label, counts in (
        ("shoal_clusters", "Clusters by status.", "status", snap.clusters),
        ("shoal_deployments", "Software deployments by status.", "status", snap.deployments),
        ("shoal_software_rollouts", "Software rollouts by phase.", "phase", snap.rollouts),
    ):
        g = GaugeMetricFamily(name, doc, labels=[label])
        for k, n in sorted(counts.items()):
            g.add_metric([k], float(n))
        yield g
    g = GaugeMetricFamily(
        "shoal_manager_lease_holders", "Engines holding the manager lease now (0 or 1)."
    )
    g.add_metric([], 1.0 if snap.manager_holder else 0.0)
    yield g


class _Process(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from PROCESS.collect()


class Exposition:
    """Everything one engine's `/metrics` serves: the process's counters and its own gauges."""

    def __init__(self, collector: EngineCollector) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Process())
        self.registry.register(collector)

    def render(self) -> bytes:
        """Prometheus' text format (blocking: call it off the event loop)."""
        return generate_latest(self.registry)

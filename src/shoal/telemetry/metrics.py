"""The process's Prometheus metrics that are counted as things happen (issue 27).

Counters and histograms live in one registry per process (`PROCESS`), not prometheus-client's
global one, so a test's several servers in one interpreter and library metrics never mix with
what `/metrics` serves. Gauges read from the database at scrape time live elsewhere
(`engine/metrics.py`), per engine. Every label here takes values from a small closed set (kinds,
statuses, operation names, error classes): never a node's name or id.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable

import prometheus_client.metrics
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

PROCESS = CollectorRegistry(auto_describe=True)
enabled = True
"""Record at all; benchmarks/metrics.py turns it off to measure what recording costs."""

# Actions take from milliseconds (a barrier) to many minutes (a 10,000-node create).
_ACTION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
_CALL_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
_bound_text: Callable[[float], str] = floatToGoString  # a bucket's `le`, as the library writes it


class _ProviderCalls(Collector):
    """`shoal_provider_calls` (a counter) and `shoal_provider_call_duration_seconds` (a
    histogram), by service, operation (and error): kept as plain numbers and turned into the
    same samples prometheus-client's `Counter` and `Histogram` would give, at scrape time.

    Issue 23: their `inc` and `observe` take a lock each, 3.5 µs per provider call, 7 % of a
    node create's Python; here a call costs a dict lookup and two additions. Only the event
    loop's thread records provider calls, so the numbers need no lock of their own."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, str, str], list[float]] = {}
        """(service, operation, error) -> [count, created]."""
        self.seconds: dict[tuple[str, str], list[float]] = {}
        """(service, operation) -> [count per bucket (not cumulative) ..., sum, created]."""
        self._bounds = (*_CALL_BUCKETS, math.inf)
        self._les = tuple(_bound_text(b) for b in self._bounds)

    def record(self, service: str, operation: str, error: str, s: float) -> None:
        counted = self.calls.get((service, operation, error))
        if counted is None:
            counted = self.calls[(service, operation, error)] = [0.0, time.time()]
        counted[0] += 1
        hist = self.seconds.get((service, operation))
        if hist is None:
            hist = self.seconds[(service, operation)] = [0.0] * len(self._bounds) + [
                0.0,
                time.time(),
            ]
        hist[bisect.bisect_left(self._bounds, s)] += 1  # the first bound >= s, as `observe`
        hist[-2] += s

    def describe(self) -> Iterable[Metric]:
        return [
            Metric("shoal_provider_calls", _CALLS_HELP, "counter"),
            Metric("shoal_provider_call_duration_seconds", _SECONDS_HELP, "histogram"),
        ]

    def collect(self) -> Iterable[Metric]:
        calls, hists = self.describe()
        for (service, operation, error), (count, created) in list(self.calls.items()):
            labels = {"service": service, "operation": operation, "error": error}
            calls.add_sample("shoal_provider_calls_total", labels, count)
            if _created_series():
                calls.add_sample("shoal_provider_calls_created", dict(labels), created)
        name = "shoal_provider_call_duration_seconds"
        for (service, operation), hist in list(self.seconds.items()):
            hist = list(hist)  # one moment's numbers
            acc = 0.0
            for le, n in zip(self._les, hist, strict=False):
                acc += n
                hists.add_sample(
                    f"{name}_bucket", {"service": service, "operation": operation, "le": le}, acc
                )
            labels = {"service": service, "operation": operation}
            hists.add_sample(f"{name}_count", labels, acc)
            hists.add_sample(f"{name}_sum", dict(labels), hist[-2])
            if _created_series():
                hists.add_sample(f"{name}_created", dict(labels), hist[-1])
        return [calls, hists]


def _created_series() -> bool:
    """Whether prometheus-client's own metrics give `_created` samples (its environment
    variable or `disable_created_metrics()`): these follow the same switch."""
    return bool(getattr(prometheus_client.metrics, "_use_created", True))


_CALLS_HELP = (
    "Calls to the provider, by provider service, operation and error class (none: succeeded)."
)
_SECONDS_HELP = "Latency of provider calls, by provider service and operation."
ACTIONS = Counter(
    "shoal_actions",
    "Actions that ended, by kind and result (SUCCEEDED, FAILED, CANCELLED).",
    ["kind", "result"],
    registry=PROCESS,
)
ACTION_SECONDS = Histogram(
    "shoal_action_duration_seconds",
    "How long actions ran, from their first claim to their end, by kind and result.",
    ["kind", "result"],
    buckets=_ACTION_BUCKETS,
    registry=PROCESS,
)
ACTION_TAKEOVERS = Counter(
    "shoal_action_takeovers",
    "Actions claimed again after their engine's lease ran out (or a retry), by kind.",
    ["kind"],
    registry=PROCESS,
)
PLACEMENTS = Counter(
    "shoal_placements",
    "Placements solved, by outcome (placed, infeasible, undecided).",
    ["outcome"],
    registry=PROCESS,
)
PLACEMENT_SECONDS = Histogram(
    "shoal_placement_duration_seconds",
    "Time to place a whole cluster, by outcome.",
    ["outcome"],
    buckets=_CALL_BUCKETS,
    registry=PROCESS,
)
HEALTH_CHECKS = Counter(
    "shoal_health_checks",
    "Health probes of nodes, by result (pass, fail).",
    ["result"],
    registry=PROCESS,
)
REPAIRS = Counter(
    "shoal_repairs",
    "Node repairs the manager asked for, by how (recreate, reboot, rebuild, replace) and reason "
    "(unhealthy, host_lost, never_made, drift).",
    ["how", "reason"],
    registry=PROCESS,
)
PROVIDER_CALLS = _ProviderCalls()
"""Both provider-call metrics (issue 27)."""
PROCESS.register(PROVIDER_CALLS)
MANAGER_LEASE_ACQUIRED = Counter(
    "shoal_manager_lease_acquisitions",
    "Times an engine of this process took the manager lease (a start or a takeover).",
    registry=PROCESS,
)
NOTIFICATIONS = Counter(
    "shoal_notifications",
    "Notifications for the message bus, by outcome (sent, dropped, failed).",
    ["outcome"],
    registry=PROCESS,
)

ERROR_CLASSES = frozenset(
    {"none", "TemporaryError", "PermanentError", "ResourceGone", "Timeout", "CapacityError"}
)


def error_class(e: BaseException | None) -> str:
    """A bounded label for an exception: its class when it is one we know, else `other`."""
    if e is None:
        return "none"
    if isinstance(e, TimeoutError):
        return "Timeout"
    name = type(e).__name__
    return name if name in ERROR_CLASSES else "other"


def action_ended(kind: str, result: str, seconds: float | None) -> None:
    if not enabled:
        return
    ACTIONS.labels(kind, result).inc()
    if seconds is not None and seconds >= 0:
        ACTION_SECONDS.labels(kind, result).observe(seconds)


def actions_ended(kind: str, result: str, seconds: list[float | None]) -> None:
    """`action_ended` of several actions alike (issue 23: a flush ends thousands; a label
    lookup per action and per metric was 6 % of its CPU)."""
    if not enabled or not seconds:
        return
    ACTIONS.labels(kind, result).inc(len(seconds))
    observe = ACTION_SECONDS.labels(kind, result).observe
    for s in seconds:
        if s is not None and s >= 0:
            observe(s)


def placed(outcome: str, seconds: float) -> None:
    if not enabled:
        return
    PLACEMENTS.labels(outcome).inc()
    PLACEMENT_SECONDS.labels(outcome).observe(seconds)


def provider_call(service: str, operation: str, error: BaseException | None, s: float) -> None:
    if enabled:
        PROVIDER_CALLS.record(
            service, operation, "none" if error is None else error_class(error), s
        )


def repair_reason(why: str) -> str:
    """A repair's free-text reason, as one of a few label values."""
    if why.startswith("unhealthy"):
        return "unhealthy"
    if "never made" in why:
        return "never_made"
    if why.startswith("host "):
        return "host_lost"
    return "drift"

"""The process's Prometheus metrics that are counted as things happen (issue 27).

Counters and histograms live in one registry per process (`PROCESS`), not prometheus-client's
global one, so a test's several servers in one interpreter and library metrics never mix with
what `/metrics` serves. Gauges read from the database at scrape time live elsewhere
(`engine/metrics.py`), per engine. Every label here takes values from a small closed set (kinds,
statuses, operation names, error classes): never a node's name or id.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

PROCESS = CollectorRegistry(auto_describe=True)
enabled = True
"""Record at all; benchmarks/metrics.py turns it off to measure what recording costs."""

# Actions take from milliseconds (a barrier) to many minutes (a 10,000-node create).
_ACTION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
_CALL_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

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
PROVIDER_CALLS = Counter(
    "shoal_provider_calls",
    "Calls to the provider, by provider service, operation and error class (none: succeeded).",
    ["service", "operation", "error"],
    registry=PROCESS,
)
PROVIDER_SECONDS = Histogram(
    "shoal_provider_call_duration_seconds",
    "Latency of provider calls, by provider service and operation.",
    ["service", "operation"],
    buckets=_CALL_BUCKETS,
    registry=PROCESS,
)
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


# Issue 23: `labels()` builds a key and takes the family's lock on every call, a few per cent
# of an engine's Python per node; the children of these small closed label sets are kept here.
_call_counts: dict[tuple[str, str, str], Counter] = {}
_call_seconds: dict[tuple[str, str], Histogram] = {}


def provider_call(service: str, operation: str, error: BaseException | None, s: float) -> None:
    if not enabled:
        return
    key = (service, operation)
    seconds = _call_seconds.get(key)
    if seconds is None:
        seconds = _call_seconds[key] = PROVIDER_SECONDS.labels(service, operation)
    counted = (service, operation, "none" if error is None else error_class(error))
    count = _call_counts.get(counted)
    if count is None:
        count = _call_counts[counted] = PROVIDER_CALLS.labels(*counted)
    count.inc()
    seconds.observe(s)


def repair_reason(why: str) -> str:
    """A repair's free-text reason, as one of a few label values."""
    if why.startswith("unhealthy"):
        return "unhealthy"
    if "never made" in why:
        return "never_made"
    if why.startswith("host "):
        return "host_lost"
    return "drift"

"""The simulated cloud's own CPU, counted apart from Shoal's (issue 23).

The sim provider runs inside the engines, so an engine's CPU includes the simulated cloud's
books (SQLite reads and writes, record decoding) that a real cloud would spend on its own
machines. `MeteredState` wraps a `SimState` and adds the thread CPU time (not wall time: a wait
for another process's SQLite lock costs nothing) of every call to
`shoal_sim_cpu_seconds_total{operation}` in the process registry `/metrics` serves, so a
benchmark can subtract it. The provider's own Python around the state (building requests and
`Resource`s) stays on Shoal's side, like a real provider's client code would.
"""

from __future__ import annotations

from collections.abc import Iterator
from time import thread_time
from types import TracebackType

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from shoal.model.inventory import Host
from shoal.model.nodes import Demand
from shoal.providers.sim.state import SimRecord, SimState
from shoal.telemetry import metrics

_OPERATIONS = (
    "by_key",
    "by_id",
    "reserve",
    "set_state",
    "rebuild",
    "set_attached",
    "remove",
    "records",
    "copies",
    "failed_hosts",
    "mark_host",
    "host_counts",
    "changes_since",
)
# Plain floats, read when /metrics is scraped: a Prometheus counter's lock and a generator-made
# context manager per call were themselves a few per cent of the engines' CPU at 20,000 nodes,
# landing on Shoal's side of the split this module exists to make.
_SPENT = dict.fromkeys(_OPERATIONS, 0.0)


def spent(operation: str, since: float) -> None:
    """Count the thread CPU since `since` (a `thread_time()`) against `operation`."""
    if metrics.enabled:
        _SPENT[operation] += thread_time() - since


def spent_seconds(operation: str) -> float:
    """The CPU counted against `operation` so far in this process."""
    return _SPENT[operation]


class _SimCpu(Collector):
    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "shoal_sim_cpu_seconds",
            "CPU time this process spent in the sim provider's simulated cloud (its state), by "
            "operation: not Shoal's own work.",
            labels=["operation"],
        )
        for operation, seconds in _SPENT.items():
            family.add_metric([operation], seconds)
        yield family


metrics.PROCESS.register(_SimCpu())


class _Metered:
    __slots__ = ("operation", "since")

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.since = thread_time()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        spent(self.operation, self.since)


class MeteredState:
    """`state`, with the CPU of each call counted (a `SimState` itself)."""

    def __init__(self, state: SimState) -> None:
        self._state = state

    def by_key(self, kind: str, key: str) -> SimRecord | None:
        with _Metered("by_key"):
            return self._state.by_key(kind, key)

    def by_id(self, resource_id: str) -> SimRecord | None:
        with _Metered("by_id"):
            return self._state.by_id(resource_id)

    def reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        with _Metered("reserve"):
            return self._state.reserve(record, host)

    def set_state(self, resource_id: str, state: str) -> bool:
        with _Metered("set_state"):
            return self._state.set_state(resource_id, state)

    def rebuild(
        self, resource_id: str, host: Host, demand: Demand, flavor: str, image: str
    ) -> SimRecord | None:
        with _Metered("rebuild"):
            return self._state.rebuild(resource_id, host, demand, flavor, image)

    def set_attached(self, resource_id: str, server_id: str | None) -> None:
        with _Metered("set_attached"):
            self._state.set_attached(resource_id, server_id)

    def remove(self, resource_id: str) -> SimRecord | None:
        with _Metered("remove"):
            return self._state.remove(resource_id)

    def records(self, cluster: str | None = None) -> list[SimRecord]:
        with _Metered("records"):
            return self._state.records(cluster)

    def copies(self, kind: str, key: str) -> list[SimRecord]:
        with _Metered("copies"):
            return self._state.copies(kind, key)

    def failed_hosts(self) -> set[str]:
        with _Metered("failed_hosts"):
            return self._state.failed_hosts()

    def mark_host(self, host: str, failed: bool) -> list[str]:
        with _Metered("mark_host"):
            return self._state.mark_host(host, failed)

    def host_counts(self) -> dict[str, int]:
        with _Metered("host_counts"):
            return self._state.host_counts()

    def changes_since(self, cursor: int | None) -> tuple[int, frozenset[str] | None]:
        with _Metered("changes_since"):
            return self._state.changes_since(cursor)

    def close(self) -> None:
        self._state.close()

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
from contextlib import contextmanager
from time import thread_time

from prometheus_client import Counter

from shoal.model.inventory import Host
from shoal.model.nodes import Demand
from shoal.providers.sim.state import SimRecord, SimState
from shoal.telemetry import metrics

SIM_CPU = Counter(
    "shoal_sim_cpu_seconds",
    "CPU time this process spent in the sim provider's simulated cloud (its state), by "
    "operation: not Shoal's own work.",
    ["operation"],
    registry=metrics.PROCESS,
)

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
)
_CHILDREN = {op: SIM_CPU.labels(op) for op in _OPERATIONS}


def spent(operation: str, since: float) -> None:
    """Count the thread CPU since `since` (a `thread_time()`) against `operation`."""
    if metrics.enabled:
        _CHILDREN[operation].inc(thread_time() - since)


@contextmanager
def _metered(operation: str) -> Iterator[None]:
    t = thread_time()
    try:
        yield
    finally:
        spent(operation, t)


class MeteredState:
    """`state`, with the CPU of each call counted in `SIM_CPU` (a `SimState` itself)."""

    def __init__(self, state: SimState) -> None:
        self._state = state

    def by_key(self, kind: str, key: str) -> SimRecord | None:
        with _metered("by_key"):
            return self._state.by_key(kind, key)

    def by_id(self, resource_id: str) -> SimRecord | None:
        with _metered("by_id"):
            return self._state.by_id(resource_id)

    def reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        with _metered("reserve"):
            return self._state.reserve(record, host)

    def set_state(self, resource_id: str, state: str) -> bool:
        with _metered("set_state"):
            return self._state.set_state(resource_id, state)

    def rebuild(
        self, resource_id: str, host: Host, demand: Demand, flavor: str, image: str
    ) -> SimRecord | None:
        with _metered("rebuild"):
            return self._state.rebuild(resource_id, host, demand, flavor, image)

    def set_attached(self, resource_id: str, server_id: str | None) -> None:
        with _metered("set_attached"):
            self._state.set_attached(resource_id, server_id)

    def remove(self, resource_id: str) -> SimRecord | None:
        with _metered("remove"):
            return self._state.remove(resource_id)

    def records(self, cluster: str | None = None) -> list[SimRecord]:
        with _metered("records"):
            return self._state.records(cluster)

    def copies(self, kind: str, key: str) -> list[SimRecord]:
        with _metered("copies"):
            return self._state.copies(kind, key)

    def failed_hosts(self) -> set[str]:
        with _metered("failed_hosts"):
            return self._state.failed_hosts()

    def mark_host(self, host: str, failed: bool) -> list[str]:
        with _metered("mark_host"):
            return self._state.mark_host(host, failed)

    def host_counts(self) -> dict[str, int]:
        with _metered("host_counts"):
            return self._state.host_counts()

    def close(self) -> None:
        self._state.close()

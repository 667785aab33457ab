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


class MeteredState:
    """`state`, with the CPU of each call counted in `SIM_CPU` (a `SimState` itself)."""

    def __init__(self, state: SimState) -> None:
        self._state = state

    def by_key(self, kind: str, key: str) -> SimRecord | None:
        t = thread_time()
        try:
            return self._state.by_key(kind, key)
        finally:
            spent("by_key", t)

    def by_id(self, resource_id: str) -> SimRecord | None:
        t = thread_time()
        try:
            return self._state.by_id(resource_id)
        finally:
            spent("by_id", t)

    def reserve(self, record: SimRecord, host: Host) -> tuple[SimRecord, bool]:
        t = thread_time()
        try:
            return self._state.reserve(record, host)
        finally:
            spent("reserve", t)

    def set_state(self, resource_id: str, state: str) -> bool:
        t = thread_time()
        try:
            return self._state.set_state(resource_id, state)
        finally:
            spent("set_state", t)

    def rebuild(
        self, resource_id: str, host: Host, demand: Demand, flavor: str, image: str
    ) -> SimRecord | None:
        t = thread_time()
        try:
            return self._state.rebuild(resource_id, host, demand, flavor, image)
        finally:
            spent("rebuild", t)

    def set_attached(self, resource_id: str, server_id: str | None) -> None:
        t = thread_time()
        try:
            self._state.set_attached(resource_id, server_id)
        finally:
            spent("set_attached", t)

    def remove(self, resource_id: str) -> SimRecord | None:
        t = thread_time()
        try:
            return self._state.remove(resource_id)
        finally:
            spent("remove", t)

    def records(self, cluster: str | None = None) -> list[SimRecord]:
        t = thread_time()
        try:
            return self._state.records(cluster)
        finally:
            spent("records", t)

    def copies(self, kind: str, key: str) -> list[SimRecord]:
        t = thread_time()
        try:
            return self._state.copies(kind, key)
        finally:
            spent("copies", t)

    def failed_hosts(self) -> set[str]:
        t = thread_time()
        try:
            return self._state.failed_hosts()
        finally:
            spent("failed_hosts", t)

    def mark_host(self, host: str, failed: bool) -> list[str]:
        t = thread_time()
        try:
            return self._state.mark_host(host, failed)
        finally:
            spent("mark_host", t)

    def host_counts(self) -> dict[str, int]:
        t = thread_time()
        try:
            return self._state.host_counts()
        finally:
            spent("host_counts", t)

    def close(self) -> None:
        self._state.close()

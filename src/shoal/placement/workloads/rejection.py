"""Why the second level refused, as data rather than text (issue 40), as the first level's
filters answer typed `Rejection`s (`placement/rejection.py`).

A refusal is a tuple of `WorkloadRejection`s: a kind, the workload (or workloads) it is about,
the rule it names (the document's own rule, so its words come from
`WorkloadRule.describe`), and the figures that prove it (needed against available, one
replica's demand, what is free). A caller asks `kind` what happened;
`words()` says it in the user's names, the sentence the API, the CLI and events show. Nothing
reads a refusal back out of its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from shoal.model.workloads import NodeSelector, WorkloadRule


class WorkloadRejectionKind(StrEnum):
    NO_SERVER_SELECTED = "no-server-selected"
    """The node selector picks none of the cluster's servers."""
    NO_ROOM = "no-room"
    """No selected server has room for one replica (CPU, memory, its ports free)."""
    TOO_FEW_PLACES = "too-few-places"
    """Ports bound on the node's address, or `max_per_node`, allow fewer places than replicas."""
    NOTHING_TO_BE_NEAR = "nothing-to-be-near"
    """An affinity against a workload that has no replicas."""
    TOO_FEW_DOMAINS = "too-few-domains"
    """Anti-affinity over a scope with fewer domains (times `max_per_domain`) than replicas."""
    CAPACITY = "capacity"
    """The replicas' CPU or memory in total exceed what the selected servers have free."""
    SHARED_PORT = "shared-port"
    """Workloads binding one port need more servers between them than may carry them."""
    NO_PLACEMENT = "no-placement"
    """The exact search proved that no placement keeps every rule at once."""
    UNDECIDED = "undecided"
    """The exact search was too large or ran out of time: not a proof."""
    BROKEN_CHECK = "broken-check"
    """A placement failed the independent check (a solver bug, refused rather than run)."""


@dataclass(frozen=True, slots=True)
class WorkloadRejection:
    kind: WorkloadRejectionKind
    workload: str = ""
    """The workload refused ("" when it is about several: `workloads`)."""
    rule: WorkloadRule | None = None
    """The document's rule that cannot be kept, if one can be named."""
    need: int = 0
    """What is needed: replicas, places or servers."""
    have: int = 0
    """What is available of the same."""
    servers: int = 0
    """The servers the workload may use (with room for one replica)."""
    cpu_milli: int = 0
    memory_mb: int = 0
    """One replica's demand."""
    free_cpu_milli: int = 0
    free_memory_mb: int = 0
    """What its servers have free in total."""
    max_per_node: int | None = None
    port: int | None = None
    workloads: tuple[str, ...] = ()
    """The workloads of a shared port."""
    domains: tuple[str, ...] = ()
    """The domains a `TOO_FEW_DOMAINS` rule has (at most ten listed)."""
    selector: NodeSelector | None = None
    ports: frozenset[int] = frozenset()
    rules: tuple[WorkloadRule, ...] = ()
    """The workload's rules, for `NO_PLACEMENT`."""
    finding: str = ""
    """What the independent check found (`BROKEN_CHECK`: `verify.violations`' words)."""

    def words(self) -> str:
        """The refusal in the user's names."""
        return _WORDS[self.kind](self)


def _selector(r: WorkloadRejection) -> str:
    parts = []
    s = r.selector
    if s is not None and s.groups:
        parts.append("groups " + ", ".join(s.groups))
    if s is not None and s.labels:
        parts.append("labels " + ", ".join(f"{k}={v}" for k, v in s.labels.items()))
    return f" ({'; '.join(parts)})" if parts else ""


def _ports(r: WorkloadRejection) -> str:
    return f", port {', '.join(map(str, sorted(r.ports)))}" if r.ports else ""


def _no_server(r: WorkloadRejection) -> str:
    return f"workload {r.workload}: no server matches its node selector{_selector(r)}"


def _no_room(r: WorkloadRejection) -> str:
    return (
        f"workload {r.workload}: no server has room for one replica "
        f"({r.cpu_milli}m CPU, {r.memory_mb} MiB{_ports(r)})"
    )


def _too_few_places(r: WorkloadRejection) -> str:
    why = (
        f"binds port {r.port} on the node's address"
        if r.port is not None
        else f"has max_per_node {r.max_per_node}"
    )
    return (
        f"workload {r.workload} {why}: {r.need} replicas need {r.need} places "
        f"but only {r.have} fit on the {r.servers} servers it may use"
    )


def _nothing_near(r: WorkloadRejection) -> str:
    assert r.rule is not None
    return f"{r.rule.describe(r.workload)}: workload {r.rule.against} has no replicas to be near"


def _too_few_domains(r: WorkloadRejection) -> str:
    assert r.rule is not None
    return (
        f"{r.rule.describe(r.workload)}: {r.need} replicas but the servers it may use are in "
        f"{r.have} {r.rule.scope}(s): {', '.join(r.domains)}"
    )


def _capacity(r: WorkloadRejection) -> str:
    return (
        f"workload {r.workload}: {r.need} replicas of {r.cpu_milli}m CPU and {r.memory_mb} MiB "
        f"exceed the {r.free_cpu_milli}m CPU and {r.free_memory_mb} MiB free on its servers"
    )


def _shared_port(r: WorkloadRejection) -> str:
    return (
        f"workloads {' and '.join(r.workloads)} all bind port {r.port} on the node's address: "
        f"{r.need} replicas need {r.need} servers, {r.have} may carry them"
    )


def _no_placement(r: WorkloadRejection) -> str:
    rules = [rule.describe(r.workload) for rule in r.rules]
    if r.max_per_node is not None:
        rules.append(f"workload {r.workload}'s max_per_node {r.max_per_node}")
    who = f"workload {r.workload}" if r.workload else "the workloads"
    return (
        "no placement of every replica keeps every rule at once (proven by the exact "
        f"search): {who} with {'; '.join(rules) or 'capacity and ports'}, on the servers' "
        "free capacity"
    )


def _undecided(r: WorkloadRejection) -> str:
    return (
        f"no placement found in time for workload {r.workload or '?'}; "
        "the exact search was too large or ran out of time"
    )


def _broken(r: WorkloadRejection) -> str:
    return f"internal check failed: {r.finding}"


_WORDS = {
    WorkloadRejectionKind.NO_SERVER_SELECTED: _no_server,
    WorkloadRejectionKind.NO_ROOM: _no_room,
    WorkloadRejectionKind.TOO_FEW_PLACES: _too_few_places,
    WorkloadRejectionKind.NOTHING_TO_BE_NEAR: _nothing_near,
    WorkloadRejectionKind.TOO_FEW_DOMAINS: _too_few_domains,
    WorkloadRejectionKind.CAPACITY: _capacity,
    WorkloadRejectionKind.SHARED_PORT: _shared_port,
    WorkloadRejectionKind.NO_PLACEMENT: _no_placement,
    WorkloadRejectionKind.UNDECIDED: _undecided,
    WorkloadRejectionKind.BROKEN_CHECK: _broken,
}

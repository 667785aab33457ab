"""Workloads: replicated containers that Shoal places on the cluster's own servers (issue 22).

A workload is a Pod-like template (containers with image, command, env, ports, resource
requests, probes, a restart policy), a replica count with bounds, and placement rules between
its replicas and against other workloads, over node (the cluster's server), host (the machine
under that server) or zone. These are the typed values the document reader builds
(`documents/workloads.py`), the second-level solver places (`placement/workloads.py`) and the
export writes back (`documents/workloads_export.py`); no I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from shoal.model.policies import ScalingPolicy
from shoal.model.software import InputSource


class RestartPolicy(StrEnum):
    """Kubernetes' restartPolicy, in the native document's lower-case words."""

    ALWAYS = "always"
    ON_FAILURE = "on-failure"
    NEVER = "never"


class ProbeKind(StrEnum):
    HTTP = "http"
    TCP = "tcp"
    EXEC = "exec"


class WorkloadScope(StrEnum):
    """The failure domain a rule counts replicas in: the server a replica runs on (`node`),
    the physical host under that server, or the zone."""

    NODE = "node"
    HOST = "host"
    ZONE = "zone"


class WorkloadRuleKind(StrEnum):
    AFFINITY = "affinity"
    ANTI_AFFINITY = "anti-affinity"
    SPREAD = "spread"


class TemplateKind(StrEnum):
    """What the user wrote the template as: Shoal's own fields, or a Kubernetes manifest."""

    NATIVE = "native"
    POD = "Pod"
    DEPLOYMENT = "Deployment"


@dataclass(frozen=True, slots=True)
class Probe:
    kind: ProbeKind
    port: int | None = None
    path: str = "/"
    command: tuple[str, ...] = ()
    period_s: float = 10.0
    timeout_s: float = 1.0
    failure_threshold: int = 3
    initial_delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ContainerPort:
    port: int
    name: str | None = None
    protocol: str = "tcp"


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Mapping[str, InputSource] = field(default_factory=dict, hash=False)
    ports: tuple[ContainerPort, ...] = ()
    cpu_milli: int = 0
    """Requested CPU in thousandths of a core (Kubernetes' `500m`)."""
    memory_mb: int = 0
    liveness: Probe | None = None
    readiness: Probe | None = None


@dataclass(frozen=True, slots=True)
class WorkloadRule:
    """A hard placement rule. Without `against` it is between the workload's own replicas;
    with it, between this workload's replicas and those of the other workload."""

    rule: WorkloadRuleKind
    scope: WorkloadScope = WorkloadScope.NODE
    against: str | None = None
    max_per_domain: int = 1
    max_skew: int = 1

    def describe(self, workload: str) -> str:
        """The rule in the user's words, e.g. "api's anti-affinity over zone"."""
        other = f" against {self.against}" if self.against else ""
        extra = ""
        if self.rule is WorkloadRuleKind.ANTI_AFFINITY and self.max_per_domain != 1:
            extra = f", max {self.max_per_domain} per {self.scope}"
        elif self.rule is WorkloadRuleKind.SPREAD:
            extra = f", max skew {self.max_skew}"
        return f"workload {workload}'s {self.rule}{other} over {self.scope}{extra}"


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Which of the cluster's servers may carry the workload: members of these node groups or
    instances (any when empty) whose labels include all of `labels`."""

    groups: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def any(self) -> bool:
        return not self.groups and not self.labels


@dataclass(frozen=True, slots=True)
class RollingSettings:
    max_unavailable: int = 1
    max_surge: int = 1


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    containers: tuple[Container, ...]
    replicas: int
    min_replicas: int = 0
    max_replicas: int | None = None
    restart: RestartPolicy = RestartPolicy.ALWAYS
    rules: tuple[WorkloadRule, ...] = ()
    max_per_node: int | None = None
    selector: NodeSelector = field(default_factory=NodeSelector)
    depends_on: tuple[str, ...] = ()
    update: RollingSettings = field(default_factory=RollingSettings)
    scaling: ScalingPolicy | None = None
    """How a receiver's trigger moves `replicas` (as a node group's `scaling`; None: one
    replica at a time, 60 s cooldown); a receiver's `params` override it."""
    kind: TemplateKind = field(default=TemplateKind.NATIVE, compare=False)
    """How it was written; the stored document is always Shoal's own fields."""

    @property
    def cpu_milli(self) -> int:
        return sum(c.cpu_milli for c in self.containers)

    @property
    def memory_mb(self) -> int:
        return sum(c.memory_mb for c in self.containers)

    @property
    def ports(self) -> frozenset[int]:
        """The node ports one replica binds (containers share the node's network)."""
        return frozenset(p.port for c in self.containers for p in c.ports)

    def replica_names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}-{i}" for i in range(1, self.replicas + 1))

"""Software on the cluster: configs, deployments, where their inputs come from, what they yield.

A *config* is what to run and with which tool (`group`, the vocabulary of Heat's agent hooks);
a *deployment* applies a config to a member of the cluster (an instance, every node of a node
group, or one part of a unit) with input values, after the deployments it depends on. These
types are the contract between the document readers (`documents/`), the pure ordering and input
resolution (`planning/software.py`), the engine that runs deployments and the API that serves
them to the in-guest agents. Parameters and environments are resolved before this model: what
is here is concrete, except secrets, which stay references until a node's metadata is served.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

from shoal.model.members import MemberRef

Json: TypeAlias = bool | int | float | str | list["Json"] | dict[str, "Json"] | None
"""A JSON value: what an input carries and an output returns."""


class HookGroup(StrEnum):
    """The tool a config is run with: the hook names of Heat's `heat-config` agent."""

    SCRIPT = "script"
    ANSIBLE = "ansible"
    PUPPET = "puppet"
    DOCKER_COMPOSE = "docker-compose"
    KUBELET = "kubelet"
    SALT = "salt"
    CHEF = "chef"
    CFN_INIT = "cfn-init"
    HIERA = "hiera"
    JSON_FILE = "json-file"
    APPLY_CONFIG = "apply-config"


class IOType(StrEnum):
    """Types of declared inputs and outputs, as Heat names them."""

    STRING = "String"
    NUMBER = "Number"
    LIST = "CommaDelimitedList"
    JSON = "Json"
    BOOLEAN = "Boolean"


class DeployAction(StrEnum):
    """When a deployment runs on a node: first time, after a change, before the node goes."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


class DeploymentStatus(StrEnum):
    """One deployment on one node."""

    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"
    DEGRADED = "DEGRADED"
    """Shown, never stored: it completed, but a container it started keeps exiting (issue 36;
    the reason says which, and its last output). The stored status stays COMPLETE, so the
    deployer does not run it again for that."""


class NodeFact(StrEnum):
    """What the cluster knows about a node and a deployment can consume."""

    NAME = "name"
    ADDRESS = "address"
    ZONE = "zone"
    HOST = "host"
    INDEX = "index"
    GROUP = "group"


class OutputScope(StrEnum):
    """Which node's value of another deployment's output an input takes."""

    NODE = "node"
    """The value on the same node; when the source runs on one node only, that node's value."""
    ALL = "all"
    """A list of the values on every node the source targets, in node-name order."""


@dataclass(frozen=True, slots=True)
class ConfigInput:
    name: str
    type: IOType = IOType.STRING
    default: Json = None
    description: str = ""


@dataclass(frozen=True, slots=True)
class ConfigOutput:
    name: str
    type: IOType = IOType.STRING
    error_output: bool = False
    description: str = ""


@dataclass(frozen=True, slots=True)
class SoftwareConfig:
    name: str
    group: HookGroup
    config: str
    inputs: tuple[ConfigInput, ...] = ()
    outputs: tuple[ConfigOutput, ...] = ()
    options: Mapping[str, Json] = field(default_factory=dict, hash=False)
    input_key: str | None = None
    """Set for a structured config deployed as Heat's StructuredDeployment: `config` is a JSON
    mapping in which every `{input_key: NAME}` is replaced by input NAME's value (null when
    there is none) when the config is served to a node (model/heat_agent.py)."""


@dataclass(frozen=True, slots=True)
class LiteralInput:
    """A value written in the document or set by a parameter."""

    value: Json


@dataclass(frozen=True, slots=True)
class SecretInput:
    """A hidden parameter's value: served to the node, never shown in views, events or logs."""

    parameter: str


@dataclass(frozen=True, slots=True)
class NodeFactInput:
    """A fact of the node the deployment runs on (its address, zone, host …)."""

    fact: NodeFact


@dataclass(frozen=True, slots=True)
class MemberFactsInput:
    """A fact of every node of a member (e.g. the addresses of group `app`), in name order."""

    member: MemberRef
    fact: NodeFact


@dataclass(frozen=True, slots=True)
class OutputInput:
    """An output of another deployment; makes this deployment depend on it."""

    deployment: str
    output: str
    scope: OutputScope = OutputScope.NODE


class NetAttr(StrEnum):
    """The addresses of a cluster's own networking an output or input can name (Heat's
    `get_attr`)."""

    PORT_ADDRESS = "port_address"
    """A port's fixed IP (`get_attr: [PORT, fixed_ips, 0, ip_address]`)."""
    FLOATING_IP_ADDRESS = "floating_ip_address"
    VIP_ADDRESS = "vip_address"
    """A load balancer's virtual IP."""


@dataclass(frozen=True, slots=True)
class NetworkFact:
    """An address of one of the cluster's ports, floating IPs or load balancers (by its name in
    `ClusterSpec.networking`): known once the document gives it, else once the engine recorded
    the one the cloud assigned (docs/networks.md). As a deployment input, the deployment waits
    until it is known, as for another deployment's output not yet complete."""

    attr: NetAttr
    name: str


InputSource: TypeAlias = (
    LiteralInput | SecretInput | NodeFactInput | MemberFactsInput | OutputInput | NetworkFact
)


@dataclass(frozen=True, slots=True)
class Deployment:
    name: str
    config: str
    target: MemberRef
    inputs: Mapping[str, InputSource] = field(default_factory=dict, hash=False)
    depends_on: tuple[str, ...] = ()
    """Declared dependencies; `OutputInput`s add theirs implicitly (`all_dependencies`)."""
    actions: frozenset[DeployAction] = frozenset({DeployAction.CREATE, DeployAction.UPDATE})
    quorum: int | None = None
    """How many of its target nodes must complete before dependents run; None means all."""
    retries: int = 0
    timeout_s: float = 600.0

    def all_dependencies(self) -> tuple[str, ...]:
        implicit = [s.deployment for s in self.inputs.values() if isinstance(s, OutputInput)]
        seen: dict[str, None] = dict.fromkeys([*self.depends_on, *implicit])
        return tuple(seen)


GENERATED_MARK = "OS::Heat::RandomString"
"""How the description of a secret Shoal generated starts (then a fingerprint)."""


@dataclass(frozen=True, slots=True)
class SoftwareSpec:
    """Every config and deployment of one cluster; empty for a cluster without software."""

    configs: tuple[SoftwareConfig, ...] = ()
    deployments: tuple[Deployment, ...] = ()
    secrets: Mapping[str, str] = field(default_factory=dict, hash=False, repr=False)
    """Values of hidden parameters, by parameter name."""
    generated: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Secrets Shoal drew itself (a Heat RandomString), by name -> `GENERATED_MARK` and the
    fingerprint of what it was drawn from: stored as the parameter's description, so an
    update drawing from the same properties keeps the stored value."""

    def config(self, name: str) -> SoftwareConfig | None:
        return next((c for c in self.configs if c.name == name), None)

    def deployment(self, name: str) -> Deployment | None:
        return next((d for d in self.deployments if d.name == name), None)


# What the engine knows at run time, and what resolution gives back.


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """A node as deployments see it."""

    name: str
    member: MemberRef
    """The node's group (with its part for a unit) or its instance name."""
    index: int | None
    address: str | None
    zone: str | None
    host: str | None
    active: bool

    def fact(self, which: NodeFact) -> Json:
        match which:
            case NodeFact.NAME:
                return self.name
            case NodeFact.ADDRESS:
                return self.address
            case NodeFact.ZONE:
                return self.zone
            case NodeFact.HOST:
                return self.host
            case NodeFact.INDEX:
                return self.index
            case NodeFact.GROUP:
                return self.member.target


@dataclass(frozen=True, slots=True)
class DeploymentRecord:
    """What has happened to one deployment on one node (stored by the engine)."""

    deployment: str
    node: str
    status: DeploymentStatus
    digest: str
    """Digest of the config and resolved inputs it last ran with."""
    outputs: Mapping[str, Json] = field(default_factory=dict, hash=False)
    attempts: int = 0
    """Runs with this digest so far (the engine starts again at 1 when the digest changes)."""
    action: DeployAction = DeployAction.CREATE
    """The action of the last run: what a retry repeats, and whether a DELETE already ran."""


@dataclass(frozen=True, slots=True)
class ResolvedDeployment:
    """One deployment due on one node, with every input resolved to a value."""

    deployment: str
    node: str
    action: DeployAction
    config: SoftwareConfig
    inputs: Mapping[str, Json] = field(hash=False)
    secret_inputs: frozenset[str] = frozenset()
    """Names of inputs whose values are secrets (redacted everywhere but the node's metadata)."""
    digest: str = ""


@dataclass(frozen=True, slots=True)
class DeploymentSignal:
    """What an agent reports when a deployment finished on a node (Heat's signal shape)."""

    status_code: int
    stdout: str = ""
    stderr: str = ""
    outputs: Mapping[str, Json] = field(default_factory=dict, hash=False)

"""What one template (or nested template) contributes to a cluster, before naming and nesting.

The resource handlers fill a `Shape`; `assemble.py` turns the top template's shape, with its
nested shapes, into Shoal's cluster draft; `deployments.py` maps the `software` list onto
Shoal's software model against that draft.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.documents.hot.values import Ref
from shoal.model.enums import Rule
from shoal.model.profile import ServerProfile, VolumeProfile


@dataclass(slots=True)
class ServerShape:
    name: str
    path: str
    profile: ServerProfile | None
    group: Ref | None = None
    """The server group its `scheduler_hints` name, if any."""
    user_data: str | None = None


@dataclass(slots=True)
class VolumeShape:
    name: str
    path: str
    profile: VolumeProfile | None


@dataclass(slots=True)
class AttachmentShape:
    path: str
    server: str
    volume: str


@dataclass(slots=True)
class ServerGroupShape:
    name: str
    path: str
    rule: Rule | None
    max_per_host: int | None = None


@dataclass(slots=True)
class NestedShape:
    """A resource whose type is a nested template, used once (not in a group)."""

    name: str
    path: str
    shape: Shape


@dataclass(slots=True)
class GroupShape:
    """`count` copies of one member: a server, or a nested template (ResourceGroup, Senlin)."""

    name: str
    path: str
    count: int | None
    member: Shape
    min_size: int = 0
    max_size: int | None = None


@dataclass(slots=True)
class SoftwareShape:
    """A software config or deployment, validated; `deployments.py` maps it onto the model."""

    name: str
    path: str
    kind: str
    servers: tuple[str, ...] = ()
    props: dict[str, object] = field(default_factory=dict)
    """Its evaluated properties (symbolic values where only the cloud would know)."""
    secrets: dict[str, str] = field(default_factory=dict)
    """Deployment input name -> the hidden parameter its value is (`get_param`)."""


@dataclass(slots=True)
class WorkloadShape:
    """A `Shoal::Workload` resource: its evaluated properties, read by `workloads.py`."""

    name: str
    path: str
    props: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RandomShape:
    """An `OS::Heat::RandomString`, validated: what its value is drawn from (Heat's semantics)."""

    name: str
    path: str
    length: int = 32
    classes: tuple[tuple[str, int], ...] = ()
    """(class name, minimum count) in order; `sequence` (deprecated) is one class, minimum 1."""
    sequences: tuple[tuple[str, int], ...] = ()
    """(characters, minimum count) in order."""
    salt: str = ""


@dataclass(frozen=True, slots=True)
class OutputShape:
    """An output of the top template, its value partly evaluated (`outputs.partial`)."""

    name: str
    path: str
    value: object
    description: str = ""


@dataclass(frozen=True, slots=True)
class NetResource:
    """One Neutron or Octavia resource as read: its type, name, pointer and properties."""

    kind: str
    name: str
    path: str
    props: dict[str, object]


@dataclass(slots=True)
class Shape:
    scope: str
    servers: list[ServerShape] = field(default_factory=list)
    volumes: list[VolumeShape] = field(default_factory=list)
    attachments: list[AttachmentShape] = field(default_factory=list)
    server_groups: list[ServerGroupShape] = field(default_factory=list)
    nested: list[NestedShape] = field(default_factory=list)
    groups: list[GroupShape] = field(default_factory=list)
    software: list[SoftwareShape] = field(default_factory=list)
    workloads: list[WorkloadShape] = field(default_factory=list)
    """`Shoal::Workload` resources of the top template (`documents/hot/workloads.py`)."""
    network: list[NetResource] = field(default_factory=list)
    """Neutron and Octavia resources as read (`neutron.py`), mapped by `netmap.py`."""
    depends: dict[str, set[str]] = field(default_factory=dict)
    """Resource name -> the resources it depends on (explicit and through functions)."""
    outputs: dict[str, object] = field(default_factory=dict)
    evaluated: dict[str, object] = field(default_factory=dict)
    """Each output's evaluated value, symbolic parts kept (what a parent's `get_attr` of this
    template follows, `documents/hot/through.py`)."""
    hidden_outputs: set[str] = field(default_factory=set)
    """Outputs that show a hidden parameter (never served through a parent's output)."""
    output_values: list[OutputShape] = field(default_factory=list)
    """The top template's outputs, to be served from the cluster (`outputs.map_outputs`)."""
    kinds: dict[str, str] = field(default_factory=dict)
    """Resource name -> its type after the registry (for messages about what cannot map)."""
    empty_groups: set[str] = field(default_factory=set)
    """ResourceGroups of count 0 whose member could not be read, left out unchecked as Heat
    leaves them (a group of 0 whose member reads is kept: it can be scaled up)."""
    props: dict[str, dict[str, object]] = field(default_factory=dict)
    """Each resource that exists (its condition true) -> its evaluated properties, symbolic
    parts kept (what the differential test against Heat compares, tests/heat_oracle)."""
    randoms: dict[str, RandomShape | None] = field(default_factory=dict)
    """RandomString resources whose properties are known before anything exists (None: they
    were refused, and the problem reported)."""

    def node_resources(self) -> set[str]:
        """Names of resources that make nodes."""
        names = {s.name for s in self.servers} | {v.name for v in self.volumes}
        return names | {n.name for n in self.nested} | {g.name for g in self.groups}

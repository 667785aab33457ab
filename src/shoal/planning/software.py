"""What software should run now: deployments in dependency order, inputs resolved, per node.

Pure and level-triggered: given the declared software, the nodes as they are and what has
happened so far (one record per deployment and node), it says which deployment should run on
which node with which action and input values. The engine calls it again whenever anything
changes and runs what it returns; running the same answer twice is the engine's to prevent
(a PENDING or IN_PROGRESS record makes this module return nothing for that pair).

The rules, in the words an operator of Heat's software deployments would use:

- A deployment runs on each ACTIVE node it targets once every deployment it depends on is
  COMPLETE, with its current inputs, on all of that dependency's target nodes (or `quorum`
  of them). A dependency that never runs on create (no CREATE action) does not hold others.
- No record: CREATE. A COMPLETE record whose digest differs from the digest of the config and
  the inputs as they resolve now (another group's addresses moved, a config changed): UPDATE.
  A FAILED record is retried with the action that failed while `attempts <= retries`, and run
  again at once when its digest changed (new inputs deserve a new chance).
- A deployment's outputs feed other deployments' inputs only from COMPLETE, current records.
- Removing a node: its DELETE actions, dependents first (`removals`).
- A deployment the document no longer declares on a node that stays (dropped from the
  document, or its node left its target: issue 36) is retired there (`retired`).

Every node passed to `due` counts as a target of the deployments that match its member, active
or not (a building node holds its dependents back); the engine leaves out nodes on their way
out. Facts gathered from a member (`MemberFactsInput`) list its ACTIVE nodes only. An input
naming an address the cloud assigns (`NetworkFact`) holds its deployment, and so its dependents,
until the engine recorded that address (`addresses`), as an output not yet complete would.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from shoal.model.graph import find_cycle
from shoal.model.members import MemberRef
from shoal.model.software import (
    DeployAction,
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    Json,
    LiteralInput,
    MemberFactsInput,
    NetworkFact,
    NodeFact,
    NodeFactInput,
    NodeFacts,
    OutputInput,
    OutputScope,
    ResolvedDeployment,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)

__all__ = [
    "DeploymentCycle",
    "SoftwareError",
    "UnknownReference",
    "digest",
    "due",
    "find_cycle",
    "order",
    "plan",
    "removals",
    "retired",
    "revision",
    "targets",
]


class SoftwareError(Exception):
    """The software spec cannot be resolved; validation of documents rules these out."""


class DeploymentCycle(SoftwareError):
    """Deployments depend on each other in a loop; `members` is the loop, first name repeated."""

    def __init__(self, members: Sequence[str]) -> None:
        self.members = tuple(members)
        super().__init__(f"deployment dependency cycle: {' → '.join(self.members)}")


class UnknownReference(SoftwareError):
    """A deployment names a config, deployment or secret the spec does not have."""

    def __init__(self, deployment: str, kind: str, name: str) -> None:
        self.deployment = deployment
        self.kind = kind
        self.name = name
        super().__init__(f"deployment '{deployment}' names unknown {kind} '{name}'")


# --- order ----------------------------------------------------------------------------------


def order(spec: SoftwareSpec) -> tuple[str, ...]:
    """Deployment names, every one after all it depends on; ties keep the document's order.

    Raises `UnknownReference` for a dependency that is not a deployment and `DeploymentCycle`
    for a loop.
    """
    names = [d.name for d in spec.deployments]
    known = set(names)
    edges: dict[str, tuple[str, ...]] = {}
    for d in spec.deployments:
        deps = d.all_dependencies()
        for dep in deps:
            if dep not in known:
                raise UnknownReference(d.name, "deployment", dep)
        edges[d.name] = deps
    cycle = find_cycle(edges)
    if cycle is not None:
        raise DeploymentCycle(cycle)
    # Kahn's algorithm, always taking the earliest ready deployment in document order.
    position = {name: i for i, name in enumerate(names)}
    waiting = {name: len(set(edges[name])) for name in names}
    dependents: dict[str, list[str]] = {name: [] for name in names}
    for name in names:
        for dep in set(edges[name]):
            dependents[dep].append(name)
    ready = [position[name] for name in names if waiting[name] == 0]
    heapq.heapify(ready)
    result: list[str] = []
    while ready:
        name = names[heapq.heappop(ready)]
        result.append(name)
        for after in dependents[name]:
            waiting[after] -= 1
            if waiting[after] == 0:
                heapq.heappush(ready, position[after])
    return tuple(result)


# --- digest ---------------------------------------------------------------------------------


def digest(config: SoftwareConfig, inputs: Mapping[str, Json]) -> str:
    """A stable hash of what a run would do: the config (body, declarations, options) and its
    resolved inputs. Secrets go in as values, so rotating one re-runs its deployments; the hash
    does not reveal them."""
    return _digest(_config_text(config), {k: _json(v) for k, v in inputs.items()})


def _json(value: Json) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _config_text(config: SoftwareConfig) -> str:
    described: dict[str, Json] = {
        "group": str(config.group),
        "config": config.config,
        "inputs": [[i.name, str(i.type), i.default] for i in config.inputs],
        "outputs": [[o.name, str(o.type), o.error_output] for o in config.outputs],
        "options": dict(config.options),
    }
    if config.input_key is not None:  # only then: every other config keeps its digest
        described["input_key"] = config.input_key
    return _json(described)


def _digest(config_text: str, value_texts: Mapping[str, str]) -> str:
    """The digest from serialized pieces, so values shared by many nodes (a member's addresses,
    every node's outputs) are serialized once per resolution, not once per node."""
    h = hashlib.sha256(config_text.encode())
    for name in sorted(value_texts):
        h.update(b"\n")
        h.update(_json(name).encode())
        h.update(b"=")
        h.update(value_texts[name].encode())
    return h.hexdigest()


# --- targets --------------------------------------------------------------------------------


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts web-2 before web-10."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in re.split(r"(\d+)", name) if p)


def _matches(member: MemberRef, node: NodeFacts) -> bool:
    return node.member.target == member.target and (
        member.part is None or node.member.part == member.part
    )


def targets(member: MemberRef, nodes: Iterable[NodeFacts]) -> tuple[NodeFacts, ...]:
    """The nodes of a member (a node group, one part of a unit, an instance), in name order."""
    return tuple(sorted((n for n in nodes if _matches(member, n)), key=lambda n: _natural(n.name)))


# --- due ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Progress:
    """One deployment's current state across its target nodes, as dependents see it."""

    nodes: tuple[NodeFacts, ...]
    complete: dict[str, DeploymentRecord]
    """Node name -> COMPLETE record with the digest its inputs give now."""
    required: int

    @property
    def satisfied(self) -> bool:
        return len(self.complete) >= self.required


@dataclass(frozen=True, slots=True)
class _Resolved:
    inputs: dict[str, Json]
    secret_inputs: frozenset[str]
    digest: str


class _Resolver:
    """One resolution: the nodes indexed by member, and the values many nodes share computed
    once (a member's facts, a deployment's outputs gathered from all its nodes)."""

    def __init__(
        self,
        spec: SoftwareSpec,
        nodes: Sequence[NodeFacts],
        records: Sequence[DeploymentRecord],
        addresses: Mapping[NetworkFact, str] | None = None,
    ) -> None:
        self.spec = spec
        self.addresses = addresses or {}
        self.records = {(r.deployment, r.node): r for r in records}
        self.progress: dict[str, _Progress] = {}
        self._by_group: dict[str, list[NodeFacts]] = {}
        for n in nodes:
            self._by_group.setdefault(n.member.target, []).append(n)
        self._targets: dict[MemberRef, tuple[NodeFacts, ...]] = {}
        self._shared: dict[tuple[object, ...], tuple[Json, str]] = {}
        self._configs: dict[str, tuple[SoftwareConfig, str]] = {}

    def targets(self, member: MemberRef) -> tuple[NodeFacts, ...]:
        found = self._targets.get(member)
        if found is None:
            found = targets(member, self._by_group.get(member.target, ()))
            self._targets[member] = found
        return found

    def config(self, d: Deployment) -> SoftwareConfig:
        return self._config(d)[0]

    def _config(self, d: Deployment) -> tuple[SoftwareConfig, str]:
        found = self._configs.get(d.config)
        if found is None:
            config = self.spec.config(d.config)
            if config is None:
                raise UnknownReference(d.name, "config", d.config)
            found = self._configs[d.config] = (config, _config_text(config))
        return found

    def ready(self, d: Deployment) -> bool:
        return all(self.progress[dep].satisfied for dep in d.all_dependencies()) and all(
            s in self.addresses for s in d.inputs.values() if isinstance(s, NetworkFact)
        )

    def resolve(self, d: Deployment, node: NodeFacts) -> _Resolved:
        config, config_text = self._config(d)
        values: dict[str, Json] = {i.name: i.default for i in config.inputs}
        texts: dict[str, str] = {}
        secret: set[str] = set()
        for name, source in d.inputs.items():
            match source:
                case LiteralInput(value):
                    values[name] = value
                case SecretInput(parameter):
                    if parameter not in self.spec.secrets:
                        raise UnknownReference(d.name, "secret", parameter)
                    values[name] = self.spec.secrets[parameter]
                    secret.add(name)
                case NodeFactInput(fact):
                    values[name] = node.fact(fact)
                case MemberFactsInput(member, fact):
                    values[name], texts[name] = self._member_facts(member, fact)
                case OutputInput(source_name, output, OutputScope.ALL):
                    values[name], texts[name] = self._gathered(source_name, output)
                case OutputInput(source_name, output, _):
                    values[name] = self.output(source_name, output, node)
                case NetworkFact() as fact:
                    # Known when `ready` (a removal's DELETE runs with what is recorded).
                    values[name] = self.addresses.get(fact)
        for name, value in values.items():
            if name not in texts:
                texts[name] = _json(value)
        return _Resolved(values, frozenset(secret), _digest(config_text, texts))

    def _member_facts(self, member: MemberRef, fact: NodeFact) -> tuple[Json, str]:
        key = ("members", member, fact)
        found = self._shared.get(key)
        if found is None:
            value: Json = [n.fact(fact) for n in self.targets(member) if n.active]
            found = self._shared[key] = (value, _json(value))
        return found

    def _gathered(self, source: str, output: str) -> tuple[Json, str]:
        key = ("outputs", source, output)
        found = self._shared.get(key)
        if found is None:
            progress = self.progress[source]
            value: Json = [
                progress.complete[n.name].outputs.get(output)
                for n in progress.nodes
                if n.name in progress.complete
            ]
            found = self._shared[key] = (value, _json(value))
        return found

    def output(self, source: str, output: str, node: NodeFacts) -> Json:
        progress = self.progress[source]
        if node.name in progress.complete:
            return progress.complete[node.name].outputs.get(output)
        # Not on this node: a single-node source (a database instance) is the usual case; for
        # a larger one the same replica index, then the first complete node, answers.
        done = [n for n in progress.nodes if n.name in progress.complete]
        same = [n for n in done if n.index is not None and n.index == node.index]
        chosen = same[0] if same else (done[0] if done else None)
        return None if chosen is None else progress.complete[chosen.name].outputs.get(output)


def _current(d: Deployment, record: DeploymentRecord | None, want: str) -> bool:
    """Whether a record stands for the deployment as it is declared now."""
    if record is None or record.status is not DeploymentStatus.COMPLETE:
        return False
    if record.action is DeployAction.DELETE:
        return False
    return record.digest == want or DeployAction.UPDATE not in d.actions


def _action_for(d: Deployment, record: DeploymentRecord | None, want: str) -> DeployAction | None:
    if record is None:
        return DeployAction.CREATE if DeployAction.CREATE in d.actions else None
    match record.status:
        case DeploymentStatus.PENDING | DeploymentStatus.IN_PROGRESS:
            return None
        case DeploymentStatus.COMPLETE | DeploymentStatus.DEGRADED:  # (DEGRADED: views only)
            if record.action is DeployAction.DELETE:
                return DeployAction.CREATE if DeployAction.CREATE in d.actions else None
            if record.digest != want and DeployAction.UPDATE in d.actions:
                return DeployAction.UPDATE
            return None
        case DeploymentStatus.FAILED:
            if record.digest == want and record.attempts > d.retries:
                return None
            if record.action is not DeployAction.DELETE and record.action in d.actions:
                return record.action
            return DeployAction.CREATE if DeployAction.CREATE in d.actions else None


@dataclass(frozen=True, slots=True)
class Plan:
    due: tuple[ResolvedDeployment, ...]
    """What should run now, in dependency order, then node-name order within a deployment."""
    wanted: Mapping[tuple[str, str], str]
    """(deployment, node) -> the digest it should have now, for deployments whose
    dependencies are satisfied (others cannot be judged yet)."""


def due(
    spec: SoftwareSpec,
    nodes: Sequence[NodeFacts],
    records: Sequence[DeploymentRecord],
    addresses: Mapping[NetworkFact, str] | None = None,
) -> tuple[ResolvedDeployment, ...]:
    """What should run now, in dependency order, then node-name order within a deployment."""
    return plan(spec, nodes, records, addresses).due


def plan(
    spec: SoftwareSpec,
    nodes: Sequence[NodeFacts],
    records: Sequence[DeploymentRecord],
    addresses: Mapping[NetworkFact, str] | None = None,
) -> Plan:
    """`due`, and the digest every ready deployment wants on each of its nodes. `addresses`:
    the cluster's recorded cloud-assigned addresses (store/network_addresses.py), which
    `NetworkFact` inputs take."""
    resolver = _Resolver(spec, nodes, records, addresses)
    wanted: dict[tuple[str, str], str] = {}
    declared = {d.name: d for d in spec.deployments}
    result: list[ResolvedDeployment] = []
    for name in order(spec):
        d = declared[name]  # order() only returns declared names
        on = resolver.targets(d.target)
        required = len(on) if d.quorum is None else min(d.quorum, len(on))
        progress = _Progress(on, {}, required)
        if DeployAction.CREATE not in d.actions:
            progress.required = 0  # runs only on update or removal: holds nobody back
        if resolver.ready(d):
            for node in on:
                resolved = resolver.resolve(d, node)
                wanted[(d.name, node.name)] = resolved.digest
                record = resolver.records.get((d.name, node.name))
                if _current(d, record, resolved.digest):
                    assert record is not None
                    progress.complete[node.name] = record
                    continue
                action = _action_for(d, record, resolved.digest)
                if action is not None and node.active:
                    result.append(_make(d, node, action, resolver.config(d), resolved))
        resolver.progress[name] = progress
    return Plan(tuple(result), wanted)


def revision(spec: SoftwareSpec, d: Deployment) -> str:
    """The deployment as the document declares it: its config, where its inputs come from, and
    the secrets it takes. Unlike a node's digest, membership changes (addresses, outputs) do
    not move it, so a rolled-back config change is tried again only when the document changes.
    """
    config = spec.config(d.config)
    if config is None:
        raise UnknownReference(d.name, "config", d.config)
    sources = {name: repr(source) for name, source in d.inputs.items()}
    secret = {
        name: spec.secrets.get(s.parameter, "")
        for name, s in d.inputs.items()
        if isinstance(s, SecretInput)
    }
    return _digest(
        _config_text(config), {**sources, **{f"secret:{k}": v for k, v in secret.items()}}
    )


def _make(
    d: Deployment, node: NodeFacts, action: DeployAction, config: SoftwareConfig, r: _Resolved
) -> ResolvedDeployment:
    return ResolvedDeployment(
        deployment=d.name,
        node=node.name,
        action=action,
        config=config,
        inputs=r.inputs,
        secret_inputs=r.secret_inputs,
        digest=r.digest,
    )


# --- removals -------------------------------------------------------------------------------


def removals(
    spec: SoftwareSpec,
    leaving: Sequence[NodeFacts],
    records: Sequence[DeploymentRecord],
    addresses: Mapping[NetworkFact, str] | None = None,
) -> tuple[ResolvedDeployment, ...]:
    """DELETE actions due on nodes about to be removed, dependents before what they depend on.

    Only deployments that declare DELETE and ran on the node (a COMPLETE record, or a FAILED
    one that is not a DELETE) get one; a FAILED DELETE is retried while `attempts <= retries`.
    Inputs resolve as on the node (its own facts; outputs from its own records; a
    cloud-assigned address as recorded, null if it never was).
    """
    by_pair = {(r.deployment, r.node): r for r in records}
    own = _Resolver(spec, leaving, records, addresses)
    declared = {d.name: d for d in spec.deployments}
    for name in order(spec):
        d = declared[name]
        on = targets(d.target, leaving)
        complete = {
            n.name: r
            for n in on
            if (r := by_pair.get((name, n.name))) is not None
            and r.status is DeploymentStatus.COMPLETE
            and r.action is not DeployAction.DELETE
        }
        own.progress[name] = _Progress(on, complete, 0)
    result: list[ResolvedDeployment] = []
    for name in reversed(order(spec)):
        d = declared[name]
        if DeployAction.DELETE not in d.actions:
            continue
        for node in targets(d.target, leaving):
            record = by_pair.get((name, node.name))
            if not _delete_due(d, record):
                continue
            resolved = own.resolve(d, node)
            result.append(_make(d, node, DeployAction.DELETE, own.config(d), resolved))
    return tuple(result)


def _delete_due(d: Deployment, record: DeploymentRecord | None) -> bool:
    if record is None:
        return False
    if record.action is DeployAction.DELETE:
        return record.status is DeploymentStatus.FAILED and record.attempts <= d.retries
    return record.status in (DeploymentStatus.COMPLETE, DeploymentStatus.FAILED)


# --- retired --------------------------------------------------------------------------------


def retired(
    spec: SoftwareSpec, nodes: Sequence[NodeFacts], records: Sequence[DeploymentRecord]
) -> tuple[DeploymentRecord, ...]:
    """The records of deployments no longer declared on their node, of the nodes given (the
    cluster's servers that stay): the deployment left the document, or the node is no longer
    one of its targets (its group left the deployment's `target`, a hook group's deployment
    renamed). Dependents first, as `removals` orders a node's DELETEs; then by node name."""
    by_group: dict[str, list[NodeFacts]] = {}
    for n in nodes:
        by_group.setdefault(n.member.target, []).append(n)
    on: dict[str, set[str]] = {
        d.name: {n.name for n in by_group.get(d.target.target, ()) if _matches(d.target, n)}
        for d in spec.deployments
    }
    present = {n.name for n in nodes}
    found = [r for r in records if r.node in present and r.node not in on.get(r.deployment, ())]
    rank = {name: i for i, name in enumerate(reversed(order(spec)))}
    # Deployments no longer declared have no order left: they go first, by name.
    found.sort(key=lambda r: (rank.get(r.deployment, -1), r.deployment, _natural(r.node)))
    return tuple(found)

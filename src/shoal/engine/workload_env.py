"""The env a replica's containers start with, from every source a document may give it (issue
22, item 1): literals and parameters (already in the stored template), `{secret: NAME}`,
`{output: D.X}` and `{members: X}`.

Its own module because only the start of a container may see these values: a secret must never
reach the stored template (store/workload_rollouts.py), a view, an event or a log, and members
and outputs are values of *now*. So the keeper hands the runtime a wrapper (`with_env`) that
resolves them at each start — placing, restarting, a rollout's batch, a liveness restart all go
through it — and the stored template keeps only the literal env it always kept.

- `{members: X}` is the list the keeper folds into the workload's revision
  (engine/workload_members.py, `rendered_salt`): the same facts from the same rows, so a change
  rolls the workload and the new replicas see the new value.
- `{output: D.X}` is read as deployments' inputs read it (planning/software.py): the value on
  the replica's server when D completed there, else on D's first complete node; `from: all`
  lists every complete node's value in node-name order. A value not known yet (D has not
  completed anywhere) holds the start back (`TemporaryError`; the keeper tries again next tick),
  as a deployment waits for the deployments whose outputs it reads.
  A digest of the values read (`output_salt`) is folded into the workload's revision, so a
  changed output rolls the workload like an image change.
- `{secret: NAME}` is the cluster's hidden parameter, given in `ContainerRun.secret_env`, which
  is never stored or printed (a runtime passes it out of its command line).

Values that are not text are JSON, as literal values are (a members list is a JSON array).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from shoal.model.software import (
    DeploymentRecord,
    DeploymentStatus,
    Json,
    LiteralInput,
    MemberFactsInput,
    NodeFacts,
    OutputInput,
    OutputScope,
    SecretInput,
)
from shoal.model.workload_rollouts import ContainerRun, ReplicaTemplate
from shoal.model.workloads import Probe, Workload
from shoal.providers.errors import TemporaryError
from shoal.providers.replicas import ReplicaProber, ReplicaRuntime, ReplicaState


def member_targets(workloads: Sequence[Workload]) -> set[str]:
    """Every member some workload's env reads (its own included: it gets the value at start)."""
    return {
        s.member.target
        for w in workloads
        for c in w.containers
        for s in c.env.values()
        if isinstance(s, MemberFactsInput)
    }


def needs_resolving(workloads: Sequence[Workload]) -> bool:
    """Whether some env value comes from a source other than the document's own values (else
    the keeper starts the stored template as it is)."""
    return any(
        not isinstance(s, LiteralInput)
        for w in workloads
        for c in w.containers
        for s in c.env.values()
    )


def secret_salt(w: Workload, secrets: Mapping[str, str]) -> str:
    """A digest of the secrets `w`'s env reads ("" when none), folded into its revision as
    deployments fold theirs into their digest: a new secret value rolls the workload, and only
    this one-way digest is ever stored."""
    used = sorted(
        {s.parameter for c in w.containers for s in c.env.values() if isinstance(s, SecretInput)}
    )
    if not used:
        return ""
    text = json.dumps([[p, secrets.get(p, "")] for p in used])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_IN_FLIGHT = (DeploymentStatus.PENDING, DeploymentStatus.IN_PROGRESS)


def output_salt(
    w: Workload, records: Sequence[DeploymentRecord]
) -> tuple[str | None, tuple[str, ...]]:
    """A digest of the deployment outputs `w`'s env reads ("" when it reads none), folded into
    its revision as members are (engine/workload_members.py): a changed output starts a rolling
    update, so running replicas get the new value, not only the next ones to start. With the
    outputs read (`D.X`, for the rollout's event).

    The digest covers `D.X` on every node `D` completed on (a replica on any of them, or the
    fallback to the first, may read it), so D completing on a new node rolls the workload too.
    None while an output read is not settled — `D` has not completed anywhere, or a run of `D`
    is pending or in flight (its record is no longer COMPLETE): the keeper leaves the rollout
    as it stands until it settles, rather than rolling twice (to a partial value, then to the
    new one). Only the digest is kept, never the values."""
    read = sorted(
        {
            (s.deployment, s.output)
            for c in w.containers
            for s in c.env.values()
            if isinstance(s, OutputInput)
        }
    )
    if not read:
        return "", ()
    names = tuple(f"{d}.{o}" for d, o in read)
    wanted = {d for d, _ in read}
    by: dict[str, list[DeploymentRecord]] = {}
    for r in records:
        if r.deployment in wanted:
            by.setdefault(r.deployment, []).append(r)
    if any(
        not any(r.status is DeploymentStatus.COMPLETE for r in by.get(d, ()))
        or any(r.status in _IN_FLIGHT for r in by.get(d, ()))
        for d in wanted
    ):
        return None, names
    values = [
        [
            d,
            o,
            [
                [r.node, r.outputs.get(o)]
                for r in sorted(by[d], key=lambda r: _natural(r.node))
                if r.status is DeploymentStatus.COMPLETE
            ],
        ]
        for d, o in read
    ]
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16], names


def reads_outputs(workloads: Sequence[Workload]) -> bool:
    return any(
        isinstance(s, OutputInput) for w in workloads for c in w.containers for s in c.env.values()
    )


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """`web-2` before `web-10`, as deployments' lists are ordered."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in re.split(r"(\d+)", name) if p)


def _text(value: Json) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class EnvSources:
    """What one cluster's replicas' env reads this tick: secrets, member facts by target, and
    the deployments' records (only read when some env names an output)."""

    def __init__(
        self,
        secrets: Mapping[str, str],
        facts: Mapping[str, Sequence[NodeFacts]],
        records: Sequence[DeploymentRecord] = (),
    ) -> None:
        self.secrets = secrets
        self.facts = facts
        self._done: dict[str, list[DeploymentRecord]] = {}
        for r in sorted(records, key=lambda r: _natural(r.node)):
            if r.status is DeploymentStatus.COMPLETE:
                self._done.setdefault(r.deployment, []).append(r)

    def members(self, src: MemberFactsInput) -> Json:
        return [
            f.fact(src.fact)
            for f in self.facts.get(src.member.target, ())
            if f.active and (src.member.part is None or f.member.part == src.member.part)
        ]

    def output(self, src: OutputInput, node: str) -> Json:
        done = self._done.get(src.deployment, [])
        if not done:
            raise TemporaryError(
                f"env reads output {src.deployment}.{src.output}: "
                f"deployment {src.deployment} has not completed yet"
            )
        if src.scope is OutputScope.ALL:
            return [r.outputs.get(src.output) for r in done]
        here = [r for r in done if r.node == node]
        return (here or done)[0].outputs.get(src.output)

    def waiting_for(self, w: Workload) -> str | None:
        """Why `w`'s replicas cannot start yet (an output its env reads is not known), or None:
        a rollout waits rather than failing on it."""
        for c in w.containers:
            for source in c.env.values():
                if isinstance(source, OutputInput) and source.deployment not in self._done:
                    return f"deployment {source.deployment} has not completed yet"
        return None

    def container(self, w: Workload, run: ContainerRun, node: str) -> ContainerRun:
        """`run` with the env of its sources resolved for a replica on `node`."""
        declared = next((c for c in w.containers if c.name == run.name), None)
        if declared is None:
            return run
        env = dict(run.env)
        hidden: list[tuple[str, str]] = []
        for name, source in sorted(declared.env.items()):
            match source:
                case LiteralInput():
                    continue  # in the stored template already
                case SecretInput(parameter):
                    hidden.append((name, self.secrets.get(parameter, "")))
                case MemberFactsInput() as src:
                    env[name] = _text(self.members(src))
                case OutputInput() as src:
                    env[name] = _text(self.output(src, node))
                case _:
                    continue
        names = {k for k, _ in hidden}
        return replace(
            run,
            env=tuple((k, v) for k, v in env.items() if k not in names),
            secret_env=tuple(hidden),
        )

    def template(self, w: Workload, t: ReplicaTemplate, node: str) -> ReplicaTemplate:
        return ReplicaTemplate(t.revision, tuple(self.container(w, c, node) for c in t.containers))


class EnvRuntime:
    """A runtime whose starts get each replica's resolved env (the keeper's view of the real
    runtime for one cluster's tick). Replicas and servers it does not know start unchanged."""

    def __init__(
        self,
        inner: ReplicaRuntime,
        sources: EnvSources,
        workload_of: Mapping[str, Workload],
        node_of: Mapping[str, str],
    ) -> None:
        self.inner = inner
        self.sources = sources
        self.workload_of = workload_of
        """Replica key -> its workload."""
        self.node_of = node_of
        """Server provider id -> the node's name."""

    async def start_replica(self, key: str, server_id: str, template: ReplicaTemplate) -> None:
        w = self.workload_of.get(key)
        if w is not None:
            template = self.sources.template(w, template, self.node_of.get(server_id, ""))
        await self.inner.start_replica(key, server_id, template)

    async def replica_states(self, keys: list[str]) -> dict[str, ReplicaState]:
        return await self.inner.replica_states(keys)

    async def stop_replica(self, key: str) -> None:
        await self.inner.stop_replica(key)


class EnvProberRuntime(EnvRuntime):
    """`EnvRuntime` over a runtime that also probes (so the keeper still finds a prober)."""

    async def probe(self, key: str, server_id: str, container: str, probe: Probe) -> bool:
        assert isinstance(self.inner, ReplicaProber)
        return await self.inner.probe(key, server_id, container, probe)


def with_env(
    inner: ReplicaRuntime,
    sources: EnvSources,
    workload_of: Mapping[str, Workload],
    node_of: Mapping[str, str],
) -> ReplicaRuntime:
    """`inner` with env resolved at each start (a prober stays a prober)."""
    if isinstance(inner, ReplicaProber):
        return EnvProberRuntime(inner, sources, workload_of, node_of)
    return EnvRuntime(inner, sources, workload_of, node_of)

"""What a transition does besides nodes, for `plan --cluster` and `apply --dry-run` (issue 36,
item 4): every deployment, container, workload, replica, network and balancer member that
applying a document would create, remove, replace, update or restart, as typed values.

Pure: from the cluster's document as it is and as it would be, the servers after the plan, and
the deployment and replica rows. What it says is what the engine then does (engine/software/
decide.py retires deployments a document drops and the keeper stops the replicas of workloads
it drops, removals first), so a dry run shows the removals the issue found hidden.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from shoal.model.cluster import ClusterSpec
from shoal.model.software import SoftwareSpec
from shoal.model.workloads import Workload

CONTAINER_HOOKS = ("docker-compose", "kubelet")


class ChangeKind(StrEnum):
    DEPLOYMENT = "deployment"
    CONTAINER = "container"
    WORKLOAD = "workload"
    REPLICA = "replica"
    NETWORK = "network"
    BALANCER_MEMBER = "balancer_member"


class Verb(StrEnum):
    CREATE = "create"
    REMOVE = "remove"
    REPLACE = "replace"
    """Taken down and made again differently (a deployment switched to another hook group)."""
    UPDATE = "update"
    """Run again in place (a deployment's config changed: its UPDATE)."""
    RESTART = "restart"
    """A replica rolled onto a new template."""


@dataclass(frozen=True, slots=True)
class Change:
    kind: ChangeKind
    name: str
    node: str | None
    change: Verb
    why: str

    def as_dict(self) -> dict[str, str | None]:
        return {
            "kind": self.kind.value,
            "name": self.name,
            "node": self.node,
            "change": self.change.value,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class Deployed:
    """A deployment row on a server that stands: what ran there."""

    deployment: str
    node: str
    hook: str
    config: str | None
    """The config body it ran (None: not kept)."""


@dataclass(frozen=True, slots=True)
class Servers:
    """The cluster's servers before and after the plan, by node group (or instance)."""

    before: Mapping[str, tuple[str, ...]]
    after: Mapping[str, tuple[str, ...]]


def changes(
    old: ClusterSpec,
    new: ClusterSpec,
    servers: Servers,
    deployed: Sequence[Deployed],
    replicas: Mapping[str, str],
) -> list[Change]:
    """Every change besides nodes, in the order the engine makes them: removals first.
    `replicas`: replica name -> workload, of the rows that stand."""
    out = _deployments(new.software, servers, deployed)
    out += _workloads(old.workloads, new.workloads, replicas)
    out += _networks(old, new)
    out += _members(old, new, servers, replicas)
    order = {Verb.REMOVE: 0, Verb.REPLACE: 1, Verb.UPDATE: 2, Verb.RESTART: 3, Verb.CREATE: 4}
    return sorted(out, key=lambda c: order[c.change])


def _deployments(new: SoftwareSpec, servers: Servers, deployed: Sequence[Deployed]) -> list[Change]:
    out: list[Change] = []
    ran = {(d.deployment, d.node): d for d in deployed}
    wanted: set[tuple[str, str]] = set()
    for d in new.deployments:
        config = new.config(d.config)
        if config is None:
            continue
        for node in servers.after.get(d.target.target, ()):
            wanted.add((d.name, node))
            before = ran.get((d.name, node))
            if before is None:
                out += _with_containers(d.name, node, config.group, Verb.CREATE, "declared")
            elif before.hook != str(config.group):
                out += _with_containers(
                    d.name, node, config.group, Verb.REPLACE, f"{before.hook} -> {config.group}"
                )
            elif before.config is not None and before.config != config.config:
                out += _with_containers(d.name, node, config.group, Verb.UPDATE, "config changed")
    gone = {n for ns in servers.before.values() for n in ns} - {
        n for ns in servers.after.values() for n in ns
    }
    for r in deployed:
        if (r.deployment, r.node) in wanted:
            continue
        why = "its node is deleted" if r.node in gone else "no longer declared on this node"
        out += _with_containers(r.deployment, r.node, r.hook, Verb.REMOVE, why)
    return out


def _with_containers(name: str, node: str, hook: str, verb: Verb, why: str) -> list[Change]:
    found = [Change(ChangeKind.DEPLOYMENT, name, node, verb, why)]
    if str(hook) in CONTAINER_HOOKS:
        found.append(Change(ChangeKind.CONTAINER, name, node, verb, f"{hook}: {why}"))
    return found


def _workloads(
    old: Iterable[Workload], new: Iterable[Workload], replicas: Mapping[str, str]
) -> list[Change]:
    before = {w.name: w for w in old}
    after = {w.name: w for w in new}
    out: list[Change] = []
    for name in sorted(before.keys() - after.keys()):
        out.append(Change(ChangeKind.WORKLOAD, name, None, Verb.REMOVE, "no longer declared"))
    for name in sorted(after.keys() - before.keys()):
        out.append(Change(ChangeKind.WORKLOAD, name, None, Verb.CREATE, "declared"))
    wanted = {f"{w.name}-{i}": w for w in after.values() for i in range(1, w.replicas + 1)}
    for replica, workload in sorted(replicas.items()):
        if replica not in wanted:
            out.append(Change(ChangeKind.REPLICA, replica, None, Verb.REMOVE, f"of {workload}"))
    for replica, w in sorted(wanted.items()):
        old_w = before.get(w.name)
        if replica not in replicas:
            out.append(Change(ChangeKind.REPLICA, replica, None, Verb.CREATE, f"of {w.name}"))
        elif old_w is not None and old_w.containers != w.containers:
            out.append(
                Change(ChangeKind.REPLICA, replica, None, Verb.RESTART, "its template changed")
            )
    return out


def _networks(old: ClusterSpec, new: ClusterSpec) -> list[Change]:
    before = {n.name for n in old.networking.networks}
    after = {n.name for n in new.networking.networks}
    return [
        Change(ChangeKind.NETWORK, n, None, Verb.REMOVE, "no longer declared")
        for n in sorted(before - after)
    ] + [
        Change(ChangeKind.NETWORK, n, None, Verb.CREATE, "declared") for n in sorted(after - before)
    ]


def _members(
    old: ClusterSpec, new: ClusterSpec, servers: Servers, replicas: Mapping[str, str]
) -> list[Change]:
    """Each balancer's members before and after: servers of a group, replicas of a workload."""
    wanted = {
        w.name: tuple(f"{w.name}-{i}" for i in range(1, w.replicas + 1)) for w in new.workloads
    }
    running: dict[str, list[str]] = {}
    for replica, workload in replicas.items():
        running.setdefault(workload, []).append(replica)

    def members(spec: ClusterSpec, side: Mapping[str, Sequence[str]]) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        for lb in spec.networking.load_balancers:
            for pool in lb.pools:
                for m in side.get(pool.members.target, ()):
                    found.add((f"{lb.name}/{pool.name}", m))
        return found

    before = members(old, {**servers.before, **running})
    after = members(new, {**servers.after, **wanted})
    return [
        Change(ChangeKind.BALANCER_MEMBER, pool, m, Verb.REMOVE, "leaves the pool")
        for pool, m in sorted(before - after)
    ] + [
        Change(ChangeKind.BALANCER_MEMBER, pool, m, Verb.CREATE, "joins the pool")
        for pool, m in sorted(after - before)
    ]

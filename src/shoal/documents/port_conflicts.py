"""Two declared things that would bind one address:port on one node, refused when the document
is read (issue 36, item 2), naming both.

Containers on a node share its network (docs/containers.md): a Pod deployment (`kubelet` hook,
`hostNetwork: true`) binds each container port it declares on every server of its target, and
a workload's replica binds its ports on the server it lands on. A workload whose every eligible
server is one where a Pod deployment binds one of its ports could never start a replica there
(the second bind fails: "address already in use", seen only in the container's log), and two
Pod deployments declaring one port on one group would fight the same way. Two replicas sharing
a port are placement's to keep apart (`placement/workloads/solve.py`, `_shared_ports`). Compose
files publish no ports here (refused: they bind in their command), so only their name is known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import yaml

from shoal.documents.collect import ProblemList, child
from shoal.documents.software import SoftwareDraft
from shoal.documents.workloads import WorkloadsDraft
from shoal.model.software import HookGroup, SoftwareConfig


def pod_ports(config: SoftwareConfig) -> tuple[int, ...]:
    """The container ports a Pod manifest declares (none for another hook group, or a body
    that is not a Pod: `check_containers` says what is wrong with it)."""
    if config.group is not HookGroup.KUBELET:
        return ()
    try:
        manifest = yaml.safe_load(config.config)
    except yaml.YAMLError:
        return ()
    spec = manifest.get("spec") if isinstance(manifest, dict) else None
    containers = spec.get("containers") if isinstance(spec, dict) else None
    found: list[int] = []
    for c in containers if isinstance(containers, list) else ():
        for p in (c.get("ports") or []) if isinstance(c, dict) else ():
            port = p.get("containerPort") if isinstance(p, dict) else None
            if isinstance(port, int) and not isinstance(port, bool):
                found.append(port)
    return tuple(dict.fromkeys(found))


def check_port_conflicts(
    software: SoftwareDraft | None,
    workloads: WorkloadsDraft,
    groups: Sequence[str],
    out: ProblemList,
) -> None:
    """Every conflict at once, each at the later declaration's pointer, naming the other."""
    if software is None:
        return
    bound: dict[tuple[str, int], str] = {}
    """(group, port) -> the deployment binding it."""
    for d in software.deployments:
        config = software.configs.get(d.config or "")
        if config is None or d.target is None:
            continue
        for port in pod_ports(config):
            key = (_group(d.target), port)
            other = bound.get(key)
            if other is not None and other != d.name:
                out.add(
                    child(d.path, "config"),
                    f"deployment {d.name} and deployment {other} both bind port {port} on "
                    f"every server of {key[0]}",
                )
            bound.setdefault(key, d.name)
    if not bound:
        return
    for w in workloads.workloads:
        eligible = list(w.selector.groups) or list(groups)
        for c in w.containers:
            for p in c.ports:
                holders = _holders(bound, eligible, p.port)
                if holders is None:
                    continue
                names = " and ".join(sorted(set(holders.values())))
                out.add(
                    child(w.path, "containers"),
                    f"workload {w.name} binds port {p.port}, which deployment {names} binds "
                    f"on every server it may run on ({', '.join(sorted(holders))})",
                )


def _holders(
    bound: Mapping[tuple[str, int], str], eligible: list[str], port: int
) -> dict[str, str] | None:
    """Group -> deployment binding `port` there, when that covers every eligible group."""
    found = {g: bound[(g, port)] for g in eligible if (g, port) in bound}
    return found if eligible and len(found) == len(eligible) else None


def _group(target: str) -> str:
    """The node group or instance a deployment's target names (`db` of `db.data`)."""
    return target.split(".", 1)[0]

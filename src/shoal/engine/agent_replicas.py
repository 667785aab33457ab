"""Workloads' replicas carried by the node-side agents (issue 22, point 6).

A provider without a `ReplicaRuntime` of its own whose servers run Heat's agents (`openstack`;
`local` with `replicas = "agents"`) still runs replicas: the keeper (engine/workloads.py) is
given this runtime instead. Starting a replica renders it as a compose config
(model/replica_compose.py) and stores it as the replica's current delivery
(store/agent_replicas.py, a new generation and run id each time); the server's metadata serves
it beside its deployments (service/deployments.py), heat-config runs heat-agents'
`docker-compose` hook on it, and heat-config-notify signals the run's URL. So:

- a replica whose delivery is in flight or signalled success reads RUNNING (readiness stays
  with its probe, which passes only once the node signalled success); a failed run, or none
  signalled within `DELIVERY_TIMEOUT_S`, reads EXITED, so the keeper delivers it again after
  its back-off; no delivery reads LOST;
- a container that exits is restarted node-side by the daemon's restart policy (the compose
  service's `restart`), not by the keeper, which cannot see it;
- a liveness failure makes the keeper start the replica again: a new generation, which changes
  a label, so compose recreates its containers;
- a replica stopped (scaled in, moved) loses its delivery: no longer in the metadata, its
  project is killed by heat-config's `50-heat-config-docker-compose`;
- probes: http and tcp from the engine to the server's recorded address; `exec` cannot run
  through the agents and is treated as passing (docs/workloads.md says so).

Secrets: the runtime is handed their values (engine/workload_env.py) but stores only their
variables' names; the metadata fills them in from the cluster's document when it is served.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from shoal.engine.context import EngineContext
from shoal.engine.software import secrets
from shoal.model import replica_compose
from shoal.model.enums import NodeStatus
from shoal.model.software import DeploymentStatus
from shoal.model.workload_rollouts import ReplicaTemplate
from shoal.model.workloads import Probe, ProbeKind, RestartPolicy
from shoal.providers import netprobe
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.replicas import ReplicaState, carried_by_agents
from shoal.store import agent_replicas as repo
from shoal.store import deployments as deployment_repo

log = logging.getLogger("shoal.workloads.agents")

DELIVERY_TIMEOUT_S = 600.0
"""A delivery not signalled within this reads EXITED (delivered again after the back-off):
the agents poll every few seconds, and an image is pulled within it."""

__all__ = ["AgentReplicas", "bare_address", "carried_by_agents", "workload_of"]


def workload_of(replica: str) -> str:
    """A replica's workload: its name without the `-N` (placement/workloads/problem.py)."""
    return replica.rsplit("-", 1)[0]


def bare_address(address: str) -> str:
    """A node's recorded address without its port ("127.1.1.2:8080" -> "127.1.1.2")."""
    if address.startswith("["):
        return address[1:].split("]", 1)[0]
    if address.count(":") == 1:
        return address.rpartition(":")[0]
    return address


class AgentReplicas:
    """`ReplicaRuntime` and `ReplicaProber` through the servers' agents (see the module)."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self._restart: dict[tuple[str, str], RestartPolicy] = {}
        """(cluster id, workload) -> its restart policy, as the keeper last declared it."""
        self._addresses: dict[str, str] = {}
        """Provider server id -> its bare address (probes)."""
        self._warned_exec: set[str] = set()
        self._seen: dict[tuple[str, str], repo.Delivery] = {}
        """The deliveries the last `replica_states` read (probes run after it in the same tick,
        so they need no read of their own; a signal since then is seen next tick)."""

    def declare(self, cluster_id: str, restart: dict[str, RestartPolicy]) -> None:
        """The restart policy of each workload of the cluster (compose's `restart`)."""
        for name, policy in restart.items():
            self._restart[(cluster_id, name)] = policy

    # -- ReplicaRuntime ------------------------------------------------------------------------

    async def start_replica(self, key: str, server_id: str, template: ReplicaTemplate) -> None:
        cluster_id, replica = key.split("/", 1)
        restart = self._restart.get((cluster_id, workload_of(replica)), RestartPolicy.ALWAYS)
        self._seen.pop((cluster_id, replica), None)  # its probes wait for the new run's signal
        await self.ctx.run_in_thread(
            self._deliver, cluster_id, replica, server_id, template, restart
        )

    def _deliver(
        self,
        cluster_id: str,
        replica: str,
        server_id: str,
        template: ReplicaTemplate,
        restart: RestartPolicy,
    ) -> None:
        now = self.ctx.clock.now()
        with self.ctx.db.transaction() as conn:
            node = repo.server_of(conn, cluster_id, server_id)
            if node is None or node.status in (NodeStatus.DELETING, NodeStatus.DELETED):
                raise ResourceGone(f"server {server_id} of cluster {cluster_id} is not running")
            address = bare_address(node.address or "")
            self._addresses[server_id] = address
            before = repo.get(conn, cluster_id, replica)
            generation = 1 if before is None else before.generation + 1
            action_id = str(uuid.uuid4())
            try:
                compose = replica_compose.render(
                    replica,
                    f"{cluster_id}/{replica}",
                    template,
                    generation=generation,
                    delivery=action_id,
                    node_name=node.name,
                    node_address=address,
                    restart=restart,
                )
            except replica_compose.UncarriableSecret as e:
                raise PermanentError(str(e)) from e
            signal_key = deployment_repo.key(conn, secrets.SIGNAL_KEY)
            repo.deliver(
                conn,
                repo.Delivery(
                    cluster_id=cluster_id,
                    replica=replica,
                    workload=workload_of(replica),
                    node_id=node.id,
                    generation=generation,
                    action_id=action_id,
                    signal_hash=secrets.digest_of(secrets.derive(signal_key, action_id)),
                    digest=replica_compose.digest_of(compose),
                    config=compose.config,
                    secret_env=compose.secret_env,
                    status=DeploymentStatus.IN_PROGRESS,
                    delivered_at=now,
                ),
            )

    async def replica_states(self, keys: list[str]) -> dict[str, ReplicaState]:
        pairs = [(k.split("/", 1)[0], k.split("/", 1)[1]) for k in keys]
        found = await self.ctx.run_in_thread(self._read, pairs)
        if len(self._seen) > 200_000:  # (clusters gone since: forgotten wholesale)
            self._seen.clear()
        for pair in pairs:
            self._seen.pop(pair, None)
        self._seen.update(found)
        now = self.ctx.clock.now()
        out: dict[str, ReplicaState] = {}
        for key, pair in zip(keys, pairs, strict=True):
            d = found.get(pair)
            if d is None:
                out[key] = ReplicaState.LOST
            elif d.status is DeploymentStatus.FAILED or (
                d.status is DeploymentStatus.IN_PROGRESS
                and now - d.delivered_at > DELIVERY_TIMEOUT_S
            ):
                out[key] = ReplicaState.EXITED
            else:
                out[key] = ReplicaState.RUNNING
        return out

    def _read(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], repo.Delivery]:
        with self.ctx.db.reading() as conn:
            return repo.for_keys(conn, pairs)

    async def stop_replica(self, key: str) -> None:
        cluster_id, replica = key.split("/", 1)
        self._seen.pop((cluster_id, replica), None)
        await self.ctx.run_in_thread(self._forget, cluster_id, replica)

    def _forget(self, cluster_id: str, replica: str) -> None:
        with self.ctx.db.transaction() as conn:
            repo.forget(conn, [(cluster_id, replica)])

    # -- ReplicaProber -------------------------------------------------------------------------

    async def probe(self, key: str, server_id: str, container: str, probe: Probe) -> bool:
        cluster_id, replica = key.split("/", 1)
        d = self._seen.get((cluster_id, replica))
        address = self._addresses.get(server_id)
        if d is None or address is None:
            d, address = await self.ctx.run_in_thread(self._probed, cluster_id, replica, server_id)
        if d is None or d.status is not DeploymentStatus.COMPLETE:
            return False  # not started on the node yet (or its run failed)
        timeout = max(0.1, probe.timeout_s)
        if probe.kind is ProbeKind.HTTP:
            assert probe.port is not None
            if not address:
                return False
            return await asyncio.to_thread(
                netprobe.http_ok, address, probe.port, probe.path, timeout
            )
        if probe.kind is ProbeKind.TCP:
            assert probe.port is not None
            if not address:
                return False
            return await asyncio.to_thread(netprobe.tcp_ok, address, probe.port, timeout)
        if key not in self._warned_exec:
            self._warned_exec.add(key)
            log.warning("replica %s: an exec probe cannot run through the agents; passing", key)
        return True

    def _probed(
        self, cluster_id: str, replica: str, server_id: str
    ) -> tuple[repo.Delivery | None, str]:
        with self.ctx.db.reading() as conn:
            d = repo.get(conn, cluster_id, replica)
            address = self._addresses.get(server_id)
            if address is None:
                node = repo.server_of(conn, cluster_id, server_id)
                address = bare_address(node.address or "") if node is not None else ""
                if address:
                    self._addresses[server_id] = address
        return d, address

"""Software deployments seen from outside: listings and logs for users, metadata and signals
for the agents on the nodes.

Users read with their bearer token, scoped to their project. Agents carry no token: a server's
metadata URL holds HMAC(server key, node id), a run's signal URL holds HMAC(signal key, action
id) (see `engine/software/secrets.py`), and any mismatch answers 404 like a missing object.
Secrets reach a node only in its own metadata; inputs shown to users are redacted, and secret
values are scrubbed from stdout/stderr before they are stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from shoal.clock import Clock
from shoal.engine.events import node_event
from shoal.engine.software import secrets
from shoal.engine.software.decide import SoftwareOf
from shoal.engine.software.inputs import REDACTED
from shoal.engine.software.source import DocumentSoftware
from shoal.engine.software.urls import Urls
from shoal.model import heat_agent, replica_compose
from shoal.model.enums import NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument, Problem
from shoal.model.rollouts import SoftwareRollout
from shoal.model.software import (
    DeployAction,
    DeploymentSignal,
    DeploymentStatus,
    HookGroup,
    Json,
    ResolvedDeployment,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.service import container_health
from shoal.service.errors import Invalid, NotFound, ServiceError
from shoal.service.views import JsonObject, View, iso
from shoal.store import agent_replicas as agent_repo
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as repo
from shoal.store import nodes as node_repo
from shoal.store import rollouts as rollout_repo
from shoal.store.agent_replicas import Delivery
from shoal.store.database import Database
from shoal.store.deployments import DeploymentRow, Finish
from shoal.store.events import add_events
from shoal.store.records import NodeRecord, Principal


class DeploymentView(View):
    """One deployment's last run on one node, as the native API answers it."""

    deployment: str
    node: str
    node_id: str
    config: str
    group: str
    action: str
    status: str
    status_reason: str = Field(
        default="",
        description="Why it reads DEGRADED: the container that keeps exiting, its output.",
    )
    status_code: int | None
    attempts: int
    action_id: str | None
    started_at: str | None
    ended_at: str | None


@dataclass(frozen=True, slots=True)
class DeploymentPage:
    """A page of a cluster's deployments, the next page's marker, and counts by status of all
    of them (so a caller watching a rollout need not read every page)."""

    deployments: list[DeploymentView]
    next_marker: str | None
    counts: dict[str, int]


class RolloutView(View):
    """Where a deployment's rolling UPDATE stands."""

    deployment: str
    group: str
    phase: str = Field(description="run, gate, pause, rollback; then done, rolled_back or stopped.")
    batch: int = Field(description="The batch started last (1-based).")
    batches: int
    nodes: list[str] = Field(description="The nodes of that batch.")
    restored: list[str] = Field(description="Nodes given their previous revision again.")
    reason: str = Field(description="Why it stopped or rolled back.")
    summary: str
    started_at: str | None
    updated_at: str | None


class DeploymentLog(DeploymentView):
    inputs: JsonObject = Field(description="Resolved inputs, secrets shown as ******.")
    outputs: JsonObject
    stdout: str = Field(description="The end of the run's stdout (secrets scrubbed).")
    stderr: str


def deployment_view(r: DeploymentRow, degraded: str | None = None) -> DeploymentView:
    """The row as the API shows it; DEGRADED with `degraded` as its reason when a container
    it started keeps exiting (service/container_health.py)."""
    return DeploymentView(
        deployment=r.name,
        node=r.node_name,
        node_id=r.node_id,
        config=r.config,
        group=r.hook,
        action=r.action.value,
        status=(DeploymentStatus.DEGRADED if degraded else r.status).value,
        status_reason=degraded or "",
        status_code=r.status_code,
        attempts=r.attempts,
        action_id=r.action_id,
        started_at=iso(r.started_at),
        ended_at=iso(r.ended_at),
    )


def rollout_view(r: SoftwareRollout) -> RolloutView:
    return RolloutView(
        deployment=r.deployment,
        group=r.group,
        phase=str(r.phase),
        batch=r.started,
        batches=len(r.batches),
        nodes=list(r.current),
        restored=list(r.restored),
        reason=r.reason,
        summary=r.summary(),
        started_at=iso(r.started_at),
        updated_at=iso(r.updated_at),
    )


def log_view(r: DeploymentRow) -> DeploymentLog:
    return DeploymentLog(
        **deployment_view(r).model_dump(),
        inputs=dict(r.inputs),
        outputs=dict(r.outputs),
        stdout=r.stdout,
        stderr=r.stderr,
    )


def scrub(text: str, values: Mapping[str, str]) -> str:
    """`text` with every occurrence of every secret value replaced, whatever its length (so a
    script echoing one does not store it). A very short secret also hides the same letters in
    other words: accepted, a secret shown is worse (issue 29)."""
    for v in sorted({v for v in values.values() if v}, key=len, reverse=True):
        text = text.replace(v, REDACTED)
    return text


def scrub_json(value: Json, values: Mapping[str, str]) -> Json:
    """`value` with secrets scrubbed from every string in it (an output a script echoed a
    secret into is stored without it). Outputs are bounded in depth before they get here."""
    if isinstance(value, str):
        return scrub(value, values)
    if isinstance(value, list):
        return [scrub_json(v, values) for v in value]
    if isinstance(value, dict):
        return {k: scrub_json(v, values) for k, v in value.items()}
    return value


class DeploymentService:
    def __init__(
        self,
        db: Database,
        inventory: Callable[[], Inventory],
        clock: Clock,
        wake: Callable[[], None],
    ) -> None:
        self.db = db
        self.clock = clock
        self.wake = wake
        self.documents = DocumentSoftware(inventory)
        self.software_of: SoftwareOf = self.documents

    @staticmethod
    def _scope(who: Principal) -> str | None:
        return None if who.is_admin else who.project_id

    # -- users ---------------------------------------------------------------------------------

    def rollouts(self, who: Principal, cluster_ref: str) -> list[RolloutView]:
        """Where each deployment's rolling UPDATE stands (the last one, if it ended)."""
        with self.db.reading() as conn:
            c = cluster_repo.get_cluster(conn, cluster_ref, self._scope(who))
            if c is None:
                raise NotFound(f"no cluster {cluster_ref!r}")
            return [rollout_view(r) for r in rollout_repo.for_cluster(conn, c.id).values()]

    def list(self, who: Principal, cluster_ref: str) -> list[DeploymentView]:
        """Every row of the cluster's live nodes (callers that need them all: small clusters,
        tests); the API pages with `page`."""
        with self.db.reading() as conn:
            c = cluster_repo.get_cluster(conn, cluster_ref, self._scope(who))
            if c is None:
                raise NotFound(f"no cluster {cluster_ref!r}")
            live = {n.id for n in node_repo.list_nodes(conn, c.id)}
            bad = container_health.degraded(conn, c.id)
            return [
                deployment_view(r, bad.get(r.id))
                for r in repo.for_cluster(conn, c.id)
                if r.node_id in live
            ]

    def page(
        self,
        who: Principal,
        cluster_ref: str,
        limit: int,
        marker: str | None,
        status: DeploymentStatus | None = None,
    ) -> DeploymentPage:
        """One page of the cluster's deployments (issue 23), paged and counted in SQL, and the
        marker of the next page (None: the last). `limit` is checked by the caller."""
        with self.db.reading() as conn:
            c = cluster_repo.get_cluster(conn, cluster_ref, self._scope(who))
            if c is None:
                raise NotFound(f"no cluster {cluster_ref!r}")
            # DEGRADED is shown, never stored: asked for, it is read among the COMPLETE rows.
            stored = DeploymentStatus.COMPLETE if status is DeploymentStatus.DEGRADED else status
            got = repo.page_for_cluster(conn, c.id, limit=limit, marker=marker, status=stored)
            if got is None:
                raise ServiceError(
                    f"no deployment {marker!r} in this list to page from",
                    [Problem("query:marker", "names no deployment of this list")],
                )
            counts = repo.counts_for_cluster(conn, c.id)
            bad = container_health.degraded(conn, c.id)
        rows, more = got
        following = rows[-1].id if more and rows else None
        if status is not None:
            rows = [r for r in rows if (r.id in bad) == (status is DeploymentStatus.DEGRADED)]
        if bad:
            complete = counts.get(DeploymentStatus.COMPLETE, 0)
            counts[DeploymentStatus.COMPLETE] = complete - len(bad)
            counts[DeploymentStatus.DEGRADED] = len(bad)
        return DeploymentPage(
            [deployment_view(r, bad.get(r.id)) for r in rows],
            following,
            {str(k): v for k, v in sorted(counts.items()) if v},
        )

    def of_node(
        self, who: Principal, node_ref: str
    ) -> tuple[NodeRecord, tuple[DeploymentView, ...]]:
        """The node and every deployment that has run on it (a node holds a handful: one per
        deployment its cluster applies to it), by name; a node of another project is not
        found."""
        with self.db.reading() as conn:
            n = node_repo.get_node(conn, node_ref, self._scope(who))
            if n is None:
                raise NotFound(f"no node {node_ref!r}")
            rows = repo.for_node(conn, n.id)
            bad = container_health.degraded_on_node(conn, n.id, rows)
        return n, tuple(deployment_view(r, bad.get(r.id)) for r in rows)

    def log(self, who: Principal, node_id: str, deployment: str) -> DeploymentLog:
        with self.db.reading() as conn:
            n = node_repo.get_node(conn, node_id, self._scope(who))
            if n is None:
                raise NotFound(f"no node {node_id!r}")
            found = next((r for r in repo.for_node(conn, n.id) if r.name == deployment), None)
        if found is None:
            raise NotFound(f"deployment {deployment!r} has not run on node {n.name}")
        return log_view(found)

    # -- agents --------------------------------------------------------------------------------

    def server_secret(self, node_id: str) -> str:
        """The secret in a server's metadata URL (for providers and tests that boot agents)."""
        with self.db.transaction() as conn:
            return secrets.derive(repo.key(conn, secrets.SERVER_KEY), node_id)

    def metadata(self, node_id: str, token: str | None, urls: Urls) -> dict[str, Json]:
        """What the server's agents read: its deployments' current runs, Heat-shaped."""
        with self.db.transaction() as conn:
            server_key = repo.key(conn, secrets.SERVER_KEY)
            signal_key = repo.key(conn, secrets.SIGNAL_KEY)
            node = node_repo.get_node(conn, node_id)
            if (
                node is None
                or not _still_there(node)
                or not token
                or not secrets.matches(secrets.derive(server_key, node_id), token)
            ):
                raise NotFound("no such server, or the token is not its token")
            rows = [r for r in repo.for_node(conn, node.id) if r.action_id is not None]
            if node.status is NodeStatus.DELETING:
                # Going: only its DELETE runs (its cleanup scripts) are still served.
                rows = [r for r in rows if r.action is DeployAction.DELETE]
            software = self._software_of(conn, node)
            deliveries = (
                [] if node.status is NodeStatus.DELETING else agent_repo.for_node(conn, node.id)
            )
            hidden = self._replica_secrets(conn, node, deliveries) if deliveries else {}
        resolved: list[ResolvedDeployment] = []
        run_of: dict[str, str] = {}
        order = {d.name: i for i, d in enumerate(software.deployments)}
        for r in sorted(rows, key=lambda r: (order.get(r.name, len(order)), r.name)):
            # What was published with the run: after a rollback that is the previous config,
            # which the document no longer declares.
            config = r.config_body or software.config(r.config)
            if config is None or r.action_id is None:
                continue  # the document no longer has it; nothing to serve
            resolved.append(
                ResolvedDeployment(
                    deployment=r.name,
                    node=node.name,
                    action=r.action,
                    config=config,
                    inputs=_unredacted(r, software),
                    secret_inputs=frozenset(r.secret_inputs),
                    digest=r.digest,
                )
            )
            run_of[r.name] = r.action_id
        for d in deliveries:  # workloads' replicas carried by the agents (issue 22, point 6)
            served = replica_delivery(d, node.name, hidden.get(d.replica, {}))
            resolved.append(served)
            run_of[served.deployment] = d.action_id
        return heat_agent.server_metadata(
            resolved,
            lambda d: urls.signal(
                run_of[d.deployment], secrets.derive(signal_key, run_of[d.deployment])
            ),
            server_id=node.id,
            stack_id=node.cluster_id or "",
            config_id=lambda d: run_of[d.deployment],
            collector=heat_agent.CollectorSettings(
                metadata_url=urls.metadata(node.id, secrets.derive(server_key, node.id))
            ),
        )

    def signal(self, action_id: str, token: str | None, body: bytes) -> DeploymentStatus:
        """Record how a run ended, from heat-config-notify's POST; idempotent once recorded."""
        with self.db.reading() as conn:
            row = repo.by_action(conn, action_id)
            owner = None if row is None else node_repo.get_node(conn, row.node_id)
        if row is None:
            return self._replica_signal(action_id, token, body)
        _, signal = _checked_signal(owner, row.signal_hash, token, body)
        if row.status is not DeploymentStatus.IN_PROGRESS:
            return row.status  # a repeated signal (agents retry) changes nothing
        now = self.clock.now()
        with self.db.transaction() as conn:
            node = node_repo.get_node(conn, row.node_id)
            software = self._software_of(conn, node) if node is not None else SoftwareSpec()
            config = row.config_body or software.config(row.config)
            failure = None
            outputs: dict[str, Json] = dict(signal.outputs)
            if config is not None:
                failure = heat_agent.failure_reason(signal, config)
                outputs = heat_agent.declared_outputs(signal, config)
            ok = signal.status_code == 0 and failure is None
            status = DeploymentStatus.COMPLETE if ok else DeploymentStatus.FAILED
            stderr = (
                signal.stderr
                if failure is None or failure in signal.stderr
                else (f"{signal.stderr}\n{failure}".strip())
            )
            stdout = scrub(signal.stdout, software.secrets)
            stderr = scrub(stderr, software.secrets)
            outputs = {k: scrub_json(v, software.secrets) for k, v in outputs.items()}
            outputs = heat_agent.with_heat_outputs(
                outputs, signal.status_code, repo.tail(stdout), repo.tail(stderr)
            )
            written = repo.finish(
                conn,
                [Finish(action_id, status, signal.status_code, stdout, stderr, outputs)],
                now,
            )
            if not written:
                # Another signal for this run ended it first: answer what it recorded.
                ended = repo.by_action(conn, action_id)
                return ended.status if ended is not None else status
            add_events(
                conn,
                [
                    node_event(
                        project_id=row.project_id,
                        cluster_id=row.cluster_id,
                        node_id=row.node_id,
                        name=row.node_name,
                        status="SIGNALLED",
                        message=f"deployment {row.name} signalled {status}"
                        f" (exit {signal.status_code})",
                        action_id=action_id,
                        level="INFO" if ok else "ERROR",
                    )
                ],
                now,
            )
        self.wake()
        return status

    # -- workloads' replicas carried by the agents (engine/agent_replicas.py) ------------------

    def _replica_secrets(
        self, conn: Any, node: NodeRecord, deliveries: Sequence[Delivery]
    ) -> dict[str, dict[tuple[str, str], str]]:
        """Per replica, the values of its env's secrets by (service, variable), read from the
        cluster's document now (never stored: a delivery names the variables only)."""
        if node.cluster_id is None or not any(d.secret_env for d in deliveries):
            return {}
        c = cluster_repo.get_cluster(conn, node.cluster_id, include_deleted=True)
        spec = self.documents.spec(c) if c is not None else None
        if spec is None:
            return {}
        values: dict[str, dict[tuple[str, str], str]] = {}
        declared = {w.name: w for w in spec.workloads}
        for d in deliveries:
            w = declared.get(d.workload)
            if w is None or not d.secret_env:
                continue
            mine: dict[tuple[str, str], str] = {}
            for container in w.containers:
                service = replica_compose.service_name(container.name)
                for var, source in container.env.items():
                    if isinstance(source, SecretInput):
                        mine[(service, var)] = spec.software.secrets.get(source.parameter, "")
            values[d.replica] = mine
        return values

    def _replica_signal(self, action_id: str, token: str | None, body: bytes) -> DeploymentStatus:
        """How a replica's delivery ran on its node (the compose hook's outcome): recorded once;
        the keeper reads it as the replica started, or failed."""
        with self.db.reading() as conn:
            found = agent_repo.by_action(conn, action_id)
            owner = None if found is None else node_repo.get_node(conn, found.node_id)
        if found is None:
            raise NotFound("no such deployment run, or the token is not its token")
        owner, signal = _checked_signal(owner, found.signal_hash, token, body)
        if found.status is not DeploymentStatus.IN_PROGRESS:
            return found.status
        ok = signal.status_code == 0
        status = DeploymentStatus.COMPLETE if ok else DeploymentStatus.FAILED
        now = self.clock.now()
        with self.db.transaction() as conn:
            software = self._software_of(conn, owner)
            stderr = scrub(signal.stderr, software.secrets)
            if not agent_repo.finish(conn, action_id, status, signal.status_code, stderr, now):
                ended = agent_repo.by_action(conn, action_id)
                return ended.status if ended is not None else status
            if not ok:
                add_events(
                    conn,
                    [
                        node_event(
                            project_id=owner.project_id,
                            cluster_id=found.cluster_id,
                            node_id=owner.id,
                            name=owner.name,
                            status="SIGNALLED",
                            message=f"replica {found.replica} failed to start on the node"
                            f" (exit {signal.status_code}): {repo.tail(stderr, 400)}",
                            action_id=action_id,
                            level="ERROR",
                        )
                    ],
                    now,
                )
        self.wake()
        return status

    def _software_of(self, conn: Any, node: NodeRecord) -> SoftwareSpec:
        if node.cluster_id is None:
            return SoftwareSpec()
        c = cluster_repo.get_cluster(conn, node.cluster_id, include_deleted=True)
        if c is None:
            return SoftwareSpec()
        return self.software_of(c) or SoftwareSpec()


def replica_delivery(
    d: Delivery, node: str, hidden: Mapping[tuple[str, str], str]
) -> ResolvedDeployment:
    """A replica's delivery as a docker-compose deployment the node's hook runs: its compose
    config, and the env files of its secrets (the only place their values appear)."""
    project = replica_compose.project_name(d.replica)
    inputs: dict[str, Json] = {}
    if d.secret_env:
        inputs[replica_compose.ENV_FILES_INPUT] = replica_compose.secret_files(
            d.secret_env, hidden, d.action_id
        )
    return ResolvedDeployment(
        deployment=project,
        node=node,
        action=DeployAction.CREATE,
        config=SoftwareConfig(
            name=project,
            group=HookGroup.DOCKER_COMPOSE,
            config=json.dumps(dict(d.config), sort_keys=True),
        ),
        inputs=inputs,
        secret_inputs=frozenset(inputs),
        digest=d.digest,
    )


def _checked_signal(
    owner: NodeRecord | None, signal_hash: str, token: str | None, body: bytes
) -> tuple[NodeRecord, DeploymentSignal]:
    """The run's server and its signal, once its token is the run's and its server still there
    (else 404, the same whether the run or the token is wrong); the body read before anything
    else, so a bad one is the same 4xx whenever it comes. A deployment's run and a replica's
    delivery alike."""
    if (
        owner is None
        or not _still_there(owner)
        or not token
        or not secrets.matches(signal_hash, secrets.digest_of(token))
    ):
        raise NotFound("no such deployment run, or the token is not its token")
    try:
        return owner, heat_agent.parse_signal(body)
    except InvalidDocument as e:
        raise Invalid(
            "the signal is not what heat-config-notify sends",
            [{"path": p.path, "message": p.message} for p in e.problems],
        ) from e


def _still_there(node: NodeRecord) -> bool:
    """A node deleted (scale-in, node or cluster delete) has no agents' credentials left: its
    metadata and its runs' signal URLs answer 404 from then on (issue 29)."""
    return node.deleted_at is None and node.status is not NodeStatus.DELETED


def _unredacted(r: DeploymentRow, software: SoftwareSpec) -> dict[str, Json]:
    values = dict(r.inputs)
    d = software.deployment(r.name)
    for name in r.secret_inputs:
        source = d.inputs.get(name) if d is not None else None
        if isinstance(source, SecretInput):
            values[name] = software.secrets.get(source.parameter, "")
    return values

"""Software deployments seen from outside: listings and logs for users, metadata and signals
for the agents on the nodes.

Users read with their bearer token, scoped to their project. Agents carry no token: a server's
metadata URL holds HMAC(server key, node id), a run's signal URL holds HMAC(signal key, action
id) (see `engine/software/secrets.py`), and any mismatch answers 404 like a missing object.
Secrets reach a node only in its own metadata; inputs shown to users are redacted, and secret
values are scrubbed from stdout/stderr before they are stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from shoal.model import heat_agent
from shoal.model.enums import NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.problems import InvalidDocument, Problem
from shoal.model.rollouts import SoftwareRollout
from shoal.model.software import (
    DeployAction,
    DeploymentStatus,
    Json,
    ResolvedDeployment,
    SecretInput,
    SoftwareSpec,
)
from shoal.service.errors import Invalid, NotFound, ServiceError
from shoal.service.views import JsonObject, View, iso
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as repo
from shoal.store import nodes as node_repo
from shoal.store import rollouts as rollout_repo
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


def deployment_view(r: DeploymentRow) -> DeploymentView:
    return DeploymentView(
        deployment=r.name,
        node=r.node_name,
        node_id=r.node_id,
        config=r.config,
        group=r.hook,
        action=r.action.value,
        status=r.status.value,
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
        self.software_of: SoftwareOf = DocumentSoftware(inventory)

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
            return [deployment_view(r) for r in repo.for_cluster(conn, c.id) if r.node_id in live]

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
            got = repo.page_for_cluster(conn, c.id, limit=limit, marker=marker, status=status)
            if got is None:
                raise ServiceError(
                    f"no deployment {marker!r} in this list to page from",
                    [Problem("query:marker", "names no deployment of this list")],
                )
            counts = repo.counts_for_cluster(conn, c.id)
        rows, more = got
        return DeploymentPage(
            [deployment_view(r) for r in rows],
            rows[-1].id if more and rows else None,
            {str(k): v for k, v in sorted(counts.items())},
        )

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
        if (
            row is None
            or owner is None
            or not _still_there(owner)
            or not token
            or not secrets.matches(row.signal_hash, secrets.digest_of(token))
        ):
            raise NotFound("no such deployment run, or the token is not its token")
        # Read before anything else, so a bad body is the same 4xx whenever it comes.
        try:
            signal = heat_agent.parse_signal(body)
        except InvalidDocument as e:
            raise Invalid(
                "the signal is not what heat-config-notify sends",
                [{"path": p.path, "message": p.message} for p in e.problems],
            ) from e
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

    def _software_of(self, conn: Any, node: NodeRecord) -> SoftwareSpec:
        if node.cluster_id is None:
            return SoftwareSpec()
        c = cluster_repo.get_cluster(conn, node.cluster_id, include_deleted=True)
        if c is None:
            return SoftwareSpec()
        return self.software_of(c) or SoftwareSpec()


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

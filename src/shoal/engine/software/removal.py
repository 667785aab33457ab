"""Before a node is deleted, the DELETE actions of the deployments that ran on it.

The engine calls this as a NODE_DELETE starts (`Engine._run_child`): the resolver
(`planning.software.removals`) lists the DELETE runs due on the node, dependents first; each is
published, run (or awaited from the node's agents, up to its timeout) and recorded one after the
other, and retried while the deployment's `retries` allow. Run ids derive from the NODE_DELETE
action's id and the deployment's name, so an engine that takes a delete over finds the same
runs: a DELETE already COMPLETE is not due again. A DELETE that fails is recorded with an
event and the node is deleted all the same; a scale-in must not hang on a cleanup script.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from typing import Protocol

from shoal.engine.context import EngineContext
from shoal.engine.events import node_event
from shoal.engine.software.decide import SoftwareOf, facts_of
from shoal.engine.software.inputs import DeployInputs
from shoal.engine.software.inputs import publication as inputs_publication
from shoal.model.enums import NodeKind
from shoal.model.software import (
    DeployAction,
    DeploymentStatus,
    NetworkFact,
    ResolvedDeployment,
    SoftwareSpec,
)
from shoal.planning import software as resolver
from shoal.providers.software import DeploymentRun, DeploymentRunner
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as deployment_repo
from shoal.store import network_addresses as address_repo
from shoal.store import nodes as node_repo
from shoal.store.deployments import DeploymentRow, Finish
from shoal.store.events import add_events
from shoal.store.records import ActionRecord, NodeRecord


class Deployer(Protocol):
    """What removals need of the deployer (`runner.Deployer`), named here so this module
    does not import the one that calls it."""

    engine: EngineContext
    software_of: SoftwareOf

    def signal_hash(self, run_id: str) -> str: ...

    def runner(self) -> DeploymentRunner | None: ...

    async def wait_row(self, run_id: str, deadline: float) -> DeploymentRow | str: ...


log = logging.getLogger("shoal.deployer")

_RUNS = uuid.UUID("0b7f3c5e-2a1d-4e8b-9c6f-5d4e3b2a1f0e")


def run_id(delete_action_id: str, deployment: str, attempt: int) -> str:
    return str(uuid.uuid5(_RUNS, f"{delete_action_id}/{deployment}/{attempt}"))


async def run_removals(deployer: Deployer, action: ActionRecord) -> None:
    e = deployer.engine

    def load() -> tuple[NodeRecord, SoftwareSpec] | None:
        with e.db.reading() as conn:
            node = node_repo.get_node(conn, action.node_id or "")
            if node is None or node.cluster_id is None or node.kind is not NodeKind.SERVER:
                return None
            cluster = cluster_repo.get_cluster(conn, node.cluster_id, include_deleted=True)
        if cluster is None:
            return None
        software = deployer.software_of(cluster)
        if software is None or not any(
            DeployAction.DELETE in d.actions for d in software.deployments
        ):
            return None
        return node, software

    found = await asyncio.to_thread(load)
    if found is None:
        return
    node, software = found
    bound = sum(d.retries + 1 for d in software.deployments)
    for attempt in range(bound):
        due = await asyncio.to_thread(_due, deployer, node, software)
        if not due:
            return
        for item in due:
            d = software.deployment(item.deployment)
            timeout = d.timeout_s if d is not None else 600.0
            rid = run_id(action.id, item.deployment, attempt)
            await _run_one(deployer, action, node, DeployInputs.of(item, timeout), rid)


def _due(
    deployer: Deployer, node: NodeRecord, software: SoftwareSpec
) -> tuple[ResolvedDeployment, ...]:
    addresses = None
    with deployer.engine.db.reading() as conn:
        rows = deployment_repo.for_node(conn, node.id)
        if node.cluster_id is not None and any(
            isinstance(s, NetworkFact) for d in software.deployments for s in d.inputs.values()
        ):
            # A DELETE taking a cloud-assigned address runs with the recorded one.
            addresses = address_repo.for_cluster(conn, node.cluster_id)
    # The node is on its way out (DELETING, perhaps renamed) but still up: DELETE runs on it.
    leaving = [facts_of(node, active=True)]
    # A replaced node was renamed out of its replacement's way (`app-2~1a2b3c4d`) after its
    # deployments ran under its old name; the rows are this node's (by id), so they are read
    # under the name it has now, or the resolver would find nothing ran on it.
    records = [dataclasses.replace(r.record(), node=node.name) for r in rows]
    return resolver.removals(software, leaving, records, addresses)


async def _run_one(
    deployer: Deployer, action: ActionRecord, node: NodeRecord, run: DeployInputs, rid: str
) -> None:
    e = deployer.engine
    assert node.cluster_id is not None
    publication = inputs_publication(
        run, node, rid, node.project_id, await asyncio.to_thread(deployer.signal_hash, rid)
    )

    def publish() -> None:
        now = e.clock.now()
        with e.db.transaction() as conn:
            deployment_repo.publish(conn, [publication], now)

    await asyncio.to_thread(publish)
    runner = deployer.runner()
    finish: Finish | None
    if runner is not None:
        signal = await runner.run(
            DeploymentRun(
                node=node.name,
                provider_id=node.provider_id,
                deployment=run.deployment,
                action=run.action,
                hook=run.hook,
                inputs=run.inputs,
                outputs=run.outputs,
            )
        )
        status = DeploymentStatus.COMPLETE if signal.status_code == 0 else DeploymentStatus.FAILED
        finish = Finish(
            rid, status, signal.status_code, signal.stdout, signal.stderr, signal.outputs
        )
    else:
        row = await deployer.wait_row(rid, e.clock.now() + run.timeout_s)
        if isinstance(row, str):
            finish = Finish(rid, DeploymentStatus.FAILED, None, "", row)
            status = DeploymentStatus.FAILED
        else:
            finish, status = None, row.status

    def record() -> None:
        now = e.clock.now()
        with e.db.transaction() as conn:
            if finish is not None:
                deployment_repo.finish(conn, [finish], now)
            ok = status is DeploymentStatus.COMPLETE
            add_events(
                conn,
                [
                    node_event(
                        project_id=node.project_id,
                        cluster_id=node.cluster_id,
                        node_id=node.id,
                        name=node.name,
                        status="DEPLOY_COMPLETE" if ok else "DEPLOY_FAILED",
                        message=f"deployment {run.deployment} DELETE "
                        + ("complete" if ok else "failed; deleting the node all the same"),
                        action_id=action.id,
                        level="INFO" if ok else "WARNING",
                    )
                ],
                now,
            )

    await asyncio.to_thread(record)

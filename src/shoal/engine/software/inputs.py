"""What a NODE_DEPLOY action carries: the run the decider chose, typed, JSON only at the store.

Inputs are stored with secrets redacted; the real values are looked up from the cluster's
document when the node's agents fetch their metadata, and never reach the actions table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from shoal.model.rollouts import Revision, config_from_json, config_to_json
from shoal.model.software import DeployAction, Json, ResolvedDeployment, SoftwareConfig
from shoal.store.deployments import Publish
from shoal.store.records import NodeRecord

REDACTED = "******"


@dataclass(frozen=True, slots=True)
class DeployInputs:
    deployment: str
    node: str
    """The node's name (what the resolver and the agents know it by)."""
    action: DeployAction
    config: str
    hook: str
    digest: str
    inputs: Mapping[str, Json] = field(default_factory=dict, hash=False)
    """Resolved values, secrets replaced by `REDACTED`."""
    secret_inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    """The config's declared outputs (a simulated run makes one of each)."""
    timeout_s: float = 600.0
    body: SoftwareConfig | None = None
    """The config itself, published with the run (what a later rollback serves again)."""
    rollback: bool = False
    """This run gives the node its previous revision again (a rolled-back config change)."""
    actions: tuple[DeployAction, ...] | None = None
    """The actions the deployment declares, kept on its row: a deployment the document drops
    later runs its DELETE from there (issue 36). None: the row keeps what it says."""

    @classmethod
    def restore(
        cls,
        deployment: str,
        node: str,
        previous: Revision,
        timeout_s: float,
        actions: tuple[DeployAction, ...] | None = None,
    ) -> DeployInputs:
        """The run that re-applies `previous` on `node` (as an UPDATE, as Heat would)."""
        return cls(
            deployment=deployment,
            node=node,
            action=DeployAction.UPDATE,
            config=previous.config.name,
            hook=str(previous.config.group),
            digest=previous.digest,
            inputs=previous.inputs,
            secret_inputs=previous.secret_inputs,
            outputs=tuple(o.name for o in previous.config.outputs),
            timeout_s=timeout_s,
            body=previous.config,
            rollback=True,
            actions=actions,
        )

    @classmethod
    def of(
        cls,
        r: ResolvedDeployment,
        timeout_s: float,
        actions: tuple[DeployAction, ...] | None = None,
    ) -> DeployInputs:
        secret = tuple(sorted(r.secret_inputs))
        shown = {k: (REDACTED if k in r.secret_inputs else v) for k, v in r.inputs.items()}
        return cls(
            deployment=r.deployment,
            node=r.node,
            action=r.action,
            config=r.config.name,
            hook=str(r.config.group),
            digest=r.digest,
            inputs=shown,
            secret_inputs=secret,
            outputs=tuple(o.name for o in r.config.outputs),
            timeout_s=timeout_s,
            body=r.config,
            actions=actions,
        )

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.body is not None:
            extra["body"] = config_to_json(self.body)
        if self.rollback:
            extra["rollback"] = True
        if self.actions is not None:
            extra["actions"] = [a.value for a in self.actions]
        return {
            **extra,
            # `node` is what the engine's node events read an action's node name from.
            "node": self.node,
            "deployment": self.deployment,
            "action": self.action.value,
            "config": self.config,
            "hook": self.hook,
            "digest": self.digest,
            "inputs": dict(self.inputs),
            "secret_inputs": list(self.secret_inputs),
            "outputs": list(self.outputs),
            "timeout_s": self.timeout_s,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeployInputs:
        return cls(
            deployment=str(data["deployment"]),
            node=str(data["node"]),
            action=DeployAction(data["action"]),
            config=str(data["config"]),
            hook=str(data["hook"]),
            digest=str(data["digest"]),
            inputs=cast(dict[str, Json], dict(data.get("inputs") or {})),
            secret_inputs=tuple(str(s) for s in data.get("secret_inputs") or ()),
            outputs=tuple(str(s) for s in data.get("outputs") or ()),
            timeout_s=float(data.get("timeout_s", 600.0)),
            body=config_from_json(data["body"]) if data.get("body") else None,
            rollback=bool(data.get("rollback", False)),
            actions=None
            if data.get("actions") is None
            else tuple(DeployAction(a) for a in data["actions"]),
        )


def publication(
    run: DeployInputs, node: NodeRecord, run_id: str, project_id: str, signal_hash: str
) -> Publish:
    """The row that publishes `run` on `node` (a NODE_DEPLOY's, or a DELETE before removal)."""
    assert node.cluster_id is not None
    return Publish(
        id=run_id,
        project_id=project_id,
        cluster_id=node.cluster_id,
        node_id=node.id,
        node_name=node.name,
        name=run.deployment,
        config=run.config,
        hook=run.hook,
        action=run.action,
        digest=run.digest,
        inputs=run.inputs,
        secret_inputs=run.secret_inputs,
        action_id=run_id,
        signal_hash=signal_hash,
        config_body=run.body,
        rollback=run.rollback,
        actions=run.actions,
    )

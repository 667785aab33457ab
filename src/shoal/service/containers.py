"""Who may run containers on `local`, and whether this machine can: checked before admission.

A local node's container API socket is root-equivalent on the host Shoal runs on (docs/
containers.md): a container config can ask podman for anything the host's root can do, and the
checks of `documents/containers.py` narrow that, not close it. So on `local`, only an admin's
clusters may carry docker-compose or kubelet deployments unless the operator sets
`local_containers_all_projects = true`; and a machine without podman refuses them with one
sentence naming the Debian packages, instead of failing on the node. Other providers run
containers inside their guests, so neither applies there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shoal.model.problems import Problem
from shoal.model.software import HookGroup, SoftwareSpec
from shoal.providers.local.podman import Podman, PodmanMissingError
from shoal.service.errors import Conflict, Forbidden
from shoal.store.records import Principal

CONTAINER_HOOKS = (HookGroup.DOCKER_COMPOSE, HookGroup.KUBELET)
SETTING = "local_containers_all_projects"


def runtime_problem() -> str | None:
    """Why this machine cannot run containers, or None when podman and runc are there."""
    try:
        Podman.find()
    except PodmanMissingError as e:
        return str(e)
    return None


@dataclass(frozen=True, slots=True)
class ContainerGate:
    provider: str
    all_projects: bool = False
    missing: Callable[[], str | None] = runtime_problem

    def check(self, who: Principal, software: SoftwareSpec) -> None:
        """Forbidden / Conflict when the cluster's software runs containers it may not."""
        if self.provider != "local":
            return
        used = {d.config for d in software.deployments}
        wanted = [c.name for c in software.configs if c.group in CONTAINER_HOOKS and c.name in used]
        if not wanted:
            return
        where = [Problem(f"/software/configs/{name}/group", "runs containers") for name in wanted]
        if not who.is_admin and not self.all_projects:
            raise Forbidden(
                "container deployments on the local provider are for admins: a node's "
                "container API is root-equivalent on this host; an operator who trusts every "
                f"project sets {SETTING} = true",
                where,
            )
        problem = self.missing()
        if problem is not None:
            raise Conflict(problem, where)

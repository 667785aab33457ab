"""Config changes roll through a node group in batches, under the group's update policy.

A deployment's UPDATE on many nodes at once (its config or inputs changed) would take every
node of a group down together if the change is bad. When the target node group declares an
update policy, at most `max_unavailable` of its UPDATE runs are in flight at a time, and once
`failure_threshold` of them have FAILED the rest are held (the failed ones keep their retries):
the operator fixes the config, which changes the digest and starts the roll again. Groups
without a policy, first runs (CREATE) and DELETE are not held back. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from shoal.model.policies import UpdatePolicy
from shoal.model.software import DeployAction, ResolvedDeployment, SoftwareSpec


def roll(
    due: Sequence[ResolvedDeployment],
    software: SoftwareSpec,
    policies: Mapping[str, UpdatePolicy],
    in_flight: Counter[str],
    failed: Counter[str],
) -> tuple[list[ResolvedDeployment], set[str]]:
    """The due items allowed now, and the deployments whose roll is held by failures.

    `policies` by node-group name; `in_flight` and `failed` count UPDATE runs by deployment.
    """
    allowed: list[ResolvedDeployment] = []
    held: set[str] = set()
    started: Counter[str] = Counter()
    for item in due:
        d = software.deployment(item.deployment)
        policy = policies.get(d.target.target) if d is not None else None
        if item.action is not DeployAction.UPDATE or policy is None:
            allowed.append(item)
            continue
        if failed[item.deployment] >= policy.failure_threshold:
            held.add(item.deployment)
            continue
        if in_flight[item.deployment] + started[item.deployment] >= policy.max_unavailable:
            continue
        started[item.deployment] += 1
        allowed.append(item)
    return allowed, held

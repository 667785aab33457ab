"""Refusals with Senlin's names, so the façade can answer with Senlin's error `type`."""

from __future__ import annotations

from shoal.service.errors import Conflict, ServiceError


class BadRequest(ServiceError):
    code = "bad_request"
    title = "Bad request"


class InvalidSpec(ServiceError):
    code = "invalid_spec"
    title = "Invalid spec"


class ResourceInUse(Conflict):
    code = "resource_in_use"


class NodeNotOrphan(Conflict):
    code = "node_not_orphan"


class FeatureNotSupported(Conflict):
    code = "feature_not_supported"


class ClusterLocked(Conflict):
    """A cluster busy with another action, in Senlin's words (its `ActionInProgress`): what a
    cluster action answers for `ClusterBusy`, naming the action refused."""

    code = "cluster_locked"

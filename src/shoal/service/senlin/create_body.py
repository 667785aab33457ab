"""The body of `POST /v1/clusters` as a typed value, checked before any lookup.

Senlin checked a new cluster's name and sizes before it looked up the profile, so these are
400s about the body even when the profile does not exist; the profile and the name's
uniqueness are the service's (`SenlinClusters.create`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from shoal.documents.names import NAME_RULE, is_name
from shoal.service.senlin import meta
from shoal.service.senlin.action_bodies import bounded
from shoal.service.senlin.bodies import integer
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.requests import as_map
from shoal.service.senlin.shapes import JsonObject
from shoal.service.senlin.sizes import check_size_params


def cluster_name(value: object) -> str:
    if not isinstance(value, str) or not is_name(value):
        raise BadRequest(f"Invalid cluster name '{value}': {NAME_RULE}.")
    return value


@dataclass(frozen=True, slots=True)
class ClusterCreate:
    """A new Senlin cluster: sizes with Senlin's defaults filled in (max -1: no limit)."""

    name: str
    profile_ref: str
    min_size: int
    max_size: int
    desired: int
    timeout: int = meta.DEFAULT_TIMEOUT
    metadata: JsonObject = field(default_factory=dict)
    """The user's metadata, any JSON (kept as Senlin was given it)."""
    config: JsonObject = field(default_factory=dict)


def parse_create(data: Mapping[str, object]) -> ClusterCreate:
    """`data` is the checked envelope's content (`bodies.CLUSTER_CREATE`)."""
    name = cluster_name(data["name"])
    profile_ref = str(data["profile_id"])

    def sized(key: str, minimum: int) -> int | None:
        value = data.get(key)
        return None if value is None else bounded(key, integer(key, value, minimum=minimum))

    min_size, max_size = sized("min_size", 0), sized("max_size", -1)
    desired = sized("desired_capacity", 0)
    timeout = sized("timeout", 0)
    problem = check_size_params(None, desired, min_size, max_size, True)
    if problem:
        raise BadRequest(problem)
    low = min_size or 0
    return ClusterCreate(
        name,
        profile_ref,
        low,
        -1 if max_size is None else max_size,
        low if desired is None else desired,
        meta.DEFAULT_TIMEOUT if timeout is None else timeout,
        as_map("metadata", data.get("metadata")),
        as_map("config", data.get("config")),
    )

"""Typed request bodies for the JSON operations (documents are read by the spec layer)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shoal.service.resize import Adjustment


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScaleBody(_Strict):
    count: int = Field(1, ge=1)
    nodegroup: str | None = None


class ResizeBody(_Strict):
    adjustment_type: Adjustment = Adjustment.EXACT_CAPACITY
    number: float
    nodegroup: str | None = None
    min_step: int = Field(1, ge=1)
    strict: bool = True
    min_size: int | None = Field(None, ge=0)
    max_size: int | None = Field(None, ge=0)


class ScaleWorkloadBody(_Strict):
    """A workload's exact replica count (docs/workloads.md: at most 10,000 per workload)."""

    workload: str = Field(min_length=1, max_length=64)
    replicas: int = Field(ge=0, le=10_000)


class AddNodesBody(_Strict):
    nodes: list[dict[str, Any]] = Field(min_length=1)


class DelNodesBody(_Strict):
    nodes: list[str] = Field(min_length=1)


class RecoverBody(_Strict):
    nodes: list[str] | None = None
    how: str | None = Field(None, pattern="^(recreate|reboot|rebuild|replace)$")


class ClusterActionBody(_Strict):
    """Exactly one operation, Senlin style: {"scale_out": {...}}."""

    scale_out: ScaleBody | None = None
    scale_in: ScaleBody | None = None
    resize: ResizeBody | None = None
    add_nodes: AddNodesBody | None = None
    del_nodes: DelNodesBody | None = None
    recover: RecoverBody | None = None
    scale_workload: ScaleWorkloadBody | None = None

    @model_validator(mode="after")
    def _one(self) -> ClusterActionBody:
        given = [k for k, v in self.__dict__.items() if v is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of scale_out, scale_in, resize, add_nodes, del_nodes, recover, "
                "scale_workload" + (f" (got {', '.join(given)})" if given else "")
            )
        return self


class NodeGroupPatch(BaseModel):
    model_config = ConfigDict(extra="allow")


MAX_TOKEN_TTL_S = 10 * 366 * 86400
"""No token is issued for longer than ten years."""

_EXPIRES = Field(
    None,
    ge=0,
    le=MAX_TOKEN_TTL_S,
    description="Seconds until the token expires; 0: never; absent: the server's default.",
)


class ProjectBody(_Strict):
    name: str = Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    expires_in_s: int | None = _EXPIRES


class TokenBody(_Strict):
    name: str = Field("", max_length=255)
    expires_in_s: int | None = _EXPIRES

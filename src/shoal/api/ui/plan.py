"""POST /ui/api/plan: what a pasted document would do, before the user applies it.

A document naming one of the caller's clusters is previewed as a change to it, by the same
`ClusterService.preview` that `POST /v1/clusters/{ref}/plan` answers with. Any other document is
placed as a new cluster exactly as `POST /v1/clusters` places it before accepting it (the solver,
with the capacity every other cluster holds), and nothing is written. A document with problems
is a 422 naming each one; a document that cannot be placed is a 409 whose details are the
solver's reasons: the same answers the apply would give.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from shoal.api.auth import Caller, runtime_of
from shoal.documents import cluster_from_tree
from shoal.documents.syntax import parse
from shoal.documents.vcluster import is_vcluster
from shoal.model.problems import InvalidDocument
from shoal.placement import solve
from shoal.runtime import Runtime
from shoal.service.clusters import problems_of
from shoal.service.errors import Invalid, Unplaceable
from shoal.store import nodes as node_repo
from shoal.store.records import Principal

router = APIRouter(prefix="/ui/api")


@dataclass(frozen=True, slots=True)
class Placed:
    node: str
    group: str
    kind: str
    zone: str
    host: str


@dataclass(slots=True)
class PlanView:
    mode: str
    """`create` (a new cluster: POST /v1/clusters applies it) or `update` (PUT /v1/clusters/ID)."""
    cluster: str
    cluster_id: str | None
    format: str
    placement: list[Placed] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    soft_violations: list[dict[str, Any]] = field(default_factory=list)
    changes: dict[str, Any] | None = None
    """For an update: the service's preview (creates with hosts, deletes, update batches)."""


def _own_cluster(rt: Runtime, who: Principal, name: str) -> str | None:
    """The id of the caller's own cluster called `name`, if there is one."""
    for c in rt.queries.clusters(who):
        if c.name == name and c.project == who.project_id:
            return c.id
    return None


def plan_document(rt: Runtime, who: Principal, body: bytes) -> PlanView:
    inventory = rt.engine.inventory_now()
    try:
        data = parse(body, "document")
        spec = cluster_from_tree(data, inventory)
    except InvalidDocument as bad:
        raise Invalid(
            f"the cluster document has {len(bad.problems)} problem(s)", problems_of(bad)
        ) from None
    fmt = "vcluster" if is_vcluster(data) else "native"
    existing = _own_cluster(rt, who, spec.name)
    if existing is not None:
        changes = rt.service.preview(who, existing, body)
        return PlanView("update", spec.name, existing, fmt, changes=changes)
    with rt.db.reading() as conn:
        used = node_repo.used_capacity(conn)
    result = solve(spec, inventory, used=used)
    if not result.feasible:
        raise Unplaceable(
            f"cluster {spec.name} cannot be placed",
            [{"path": "", "message": r} for r in result.reasons],
        )
    return PlanView(
        "create",
        spec.name,
        None,
        fmt,
        placement=[Placed(a.node, a.group, a.kind, a.zone, a.host) for a in result.assignments],
        checks=[c.as_dict() for c in result.checks],
        soft_violations=[v.as_dict() for v in result.soft_violations],
    )


@router.post("/plan")
async def plan(request: Request, who: Caller) -> dict[str, Any]:
    """The body is the document, as `POST /v1/clusters` takes it."""
    rt = runtime_of(request)
    body = await request.body()
    return {"plan": asdict(await run_in_threadpool(plan_document, rt, who, body))}

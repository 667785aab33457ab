"""`POST /v1/imports/senlin` (admin): import a Senlin deployment's clusters, or plan it.

The answer is the import's report (what was imported, left unchanged, refused, and every
policy, receiver and node that did not map, with why). An unreadable database is a 503, a bad
URL a 422 at `/database`. `shoal import senlin` calls it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.service.errors import Forbidden
from shoal.service.senlin_import import ReportJson, SenlinImport

router = APIRouter(
    prefix="/v1/imports", tags=["imports"], responses=schemas.ERRORS, route_class=schemas.ExactRoute
)


class SenlinImportBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    database: str = Field(
        min_length=1,
        max_length=2048,
        description="Senlin's database: mysql+pymysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
    )
    project: str | None = Field(None, min_length=1, max_length=64)
    dry_run: bool = False


class SenlinImportReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool
    summary: dict[str, int]
    clusters: list[dict[str, Any]]
    standalone_nodes: list[dict[str, Any]]
    receivers_without_cluster: list[dict[str, Any]]
    credentials: dict[str, Any]


@router.post(
    "/senlin",
    response_model=SenlinImportReport,
    responses={503: {"model": schemas.ErrorBody, "description": "Senlin's database unreadable"}},
)
async def import_senlin(body: SenlinImportBody, request: Request, who: Caller) -> ReportJson:
    """Import (or with `dry_run`, plan) every Senlin cluster, or one project's."""
    if not who.is_admin:
        raise Forbidden("only an admin imports from Senlin")
    rt = runtime_of(request)
    importer = SenlinImport(rt.db, rt.provider, rt.service, rt.engine.inventory_now, rt.clock)
    report = await importer.run(body.database, body.project, body.dry_run)
    return report.to_json()

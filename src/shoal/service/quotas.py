"""Per-project quotas: what a project may hold, what it holds, and the admin's overrides.

The limits are Nova's and Senlin's idea: a default per resource from settings, an override per
project stored by an admin, -1 meaning unlimited. A project reads its own; only an admin reads
another's or changes any. Enforcement is in `ClusterService` (see `service/limits.py`).
"""

from __future__ import annotations

from pydantic import Field

from shoal.clock import Clock
from shoal.service.errors import Forbidden, NotFound
from shoal.service.limits import QUOTA_RESOURCES, Limits, check_quota_values
from shoal.service.views import View
from shoal.store import auth as auth_repo
from shoal.store import quotas as quota_repo
from shoal.store.database import Connection, Database
from shoal.store.records import Principal


class QuotaLine(View):
    limit: int = Field(description="-1: unlimited.")
    in_use: int
    default: bool = Field(description="True: the server's default, not a per-project override.")


class QuotaView(View):
    """A project's quotas as the native API answers them."""

    project: str
    quotas: dict[str, QuotaLine] = Field(
        description="Per resource: clusters, nodes, vcpus, ram_mb, volume_gb."
    )


class QuotaService:
    def __init__(self, db: Database, clock: Clock, limits: Limits) -> None:
        self.db = db
        self.clock = clock
        self.limits = limits

    def show(self, who: Principal, project: str) -> QuotaView:
        with self.db.reading() as conn:
            project_id = self._project(conn, who, project, write=False)
            return self._view(conn, project_id)

    def set(self, who: Principal, project: str, body: object) -> QuotaView:
        values = check_quota_values(body)
        with self.db.transaction() as conn:
            project_id = self._project(conn, who, project, write=True)
            quota_repo.set_overrides(conn, project_id, values, self.clock.now())
            return self._view(conn, project_id)

    def _project(self, conn: Connection, who: Principal, ref: str, *, write: bool) -> str:
        if write and not who.is_admin:
            raise Forbidden("only an admin sets quotas")
        project_id = auth_repo.project_id_by_name(conn, ref)
        if project_id is None and ref == who.project_id:
            project_id = ref  # a project known only to Keystone: its defaults apply
        if project_id is None or (not who.is_admin and project_id != who.project_id):
            raise NotFound(f"no project {ref!r}")
        return project_id

    def _view(self, conn: Connection, project_id: str) -> QuotaView:
        overrides = quota_repo.overrides(conn, project_id)
        used = quota_repo.usage(conn, project_id)
        return QuotaView(
            project=project_id,
            quotas={
                r: QuotaLine(
                    limit=self.limits.quota_of(r, overrides, project_id),
                    in_use=used.of(r),
                    default=r not in overrides,
                )
                for r in QUOTA_RESOURCES
            },
        )

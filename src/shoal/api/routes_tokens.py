"""Tokens: more for a project (admin), listing them, and revoking one.

A token expires after its `expires_in_s` (the `token_ttl_s` setting when not given; 0: never)
and can be revoked at any time; either way it then answers 401. An admin manages every
project's tokens; a project may list and revoke its own (a leaked token must not wait for an
admin). Revoked tokens stay listed, with the time they stopped working.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from shoal.api import schemas
from shoal.api.auth import Caller, runtime_of
from shoal.api.bodies import TokenBody
from shoal.runtime import Runtime
from shoal.service.errors import Forbidden, NotFound
from shoal.service.views import iso
from shoal.store import auth as auth_repo
from shoal.store.records import Principal

router = APIRouter(
    prefix="/v1",
    tags=["profiles, projects"],
    responses=schemas.ERRORS,
    route_class=schemas.ExactRoute,
)


def ttl_of(rt: Runtime, expires_in_s: int | None) -> float | None:
    """The lifetime of a new token: as asked, else the default; None: it never expires."""
    ttl = rt.settings.token_ttl_s if expires_in_s is None else float(expires_in_s)
    return ttl or None


def token_view(t: auth_repo.TokenInfo, now: float) -> dict[str, Any]:
    if t.revoked_at is not None:
        status = "REVOKED"
    elif t.expires_at is not None and t.expires_at <= now:
        status = "EXPIRED"
    else:
        status = "ACTIVE"
    return {
        "id": t.id,
        "project": t.project_id,
        "name": t.name,
        "admin": t.is_admin,
        "status": status,
        "created_at": iso(t.created_at),
        "expires_at": iso(t.expires_at),
        "revoked_at": iso(t.revoked_at),
    }


def _project(rt: Runtime, who: Principal, ref: str) -> str:
    """The project `ref` names (id or name), if the caller may manage its tokens."""
    with rt.db.reading() as conn:
        project_id = auth_repo.project_id_by_name(conn, ref)
    if project_id is None or not (who.is_admin or project_id == who.project_id):
        raise NotFound(f"no project {ref!r}")
    return project_id


@router.get("/projects/{ref}/tokens", response_model=schemas.TokenList)
async def list_tokens(ref: str, request: Request, who: Caller) -> dict[str, Any]:
    rt = runtime_of(request)

    def find() -> list[auth_repo.TokenInfo]:
        project_id = _project(rt, who, ref)
        with rt.db.reading() as conn:
            return auth_repo.list_tokens(conn, project_id)

    now = rt.clock.now()
    return {"tokens": [token_view(t, now) for t in await run_in_threadpool(find)]}


@router.post("/projects/{ref}/tokens", status_code=201, response_model=schemas.NewToken)
async def create_token(ref: str, body: TokenBody, request: Request, who: Caller) -> dict[str, Any]:
    """Another token for the project (admin); the secret is shown only in this answer."""
    if not who.is_admin:
        raise Forbidden("only an admin issues tokens")
    rt = runtime_of(request)
    now = rt.clock.now()

    def issue() -> auth_repo.Issued:
        project_id = _project(rt, who, ref)
        with rt.db.transaction() as conn:
            return auth_repo.issue_token(
                conn, project_id, now, name=body.name, ttl_s=ttl_of(rt, body.expires_in_s)
            )

    issued = await run_in_threadpool(issue)
    return {"token": issued.secret, "token_info": token_view(issued.info, now)}


@router.delete("/tokens/{token_id}", response_model=schemas.OneToken)
async def revoke_token(token_id: str, request: Request, who: Caller) -> dict[str, Any]:
    """Revoke a token: from now on it answers 401. Revoking twice keeps the first time."""
    rt = runtime_of(request)
    now = rt.clock.now()

    def revoke() -> auth_repo.TokenInfo:
        with rt.db.transaction() as conn:
            found = auth_repo.get_token(conn, token_id)
            if found is None or not (who.is_admin or found.project_id == who.project_id):
                raise NotFound(f"no token {token_id!r}")
            revoked = auth_repo.revoke_token(conn, token_id, now)
        assert revoked is not None
        return revoked

    return {"token_info": token_view(await run_in_threadpool(revoke), now)}

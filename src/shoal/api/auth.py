"""Who is calling: a bearer token (or X-Auth-Token) resolved to a project.

With `auth = "keystone"` the token is a Keystone token, checked by `shoal.api.keystone`. Both
headers are declared as security schemes, so the OpenAPI document tells clients how to log in.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from shoal.api.keystone import KeystoneAuth
from shoal.runtime import Runtime
from shoal.service.errors import Forbidden, Unauthorized
from shoal.store import auth as auth_repo
from shoal.store.records import Principal

_bearer = HTTPBearer(auto_error=False, description="A Shoal token (or a Keystone token).")
_x_auth_token = APIKeyHeader(
    name="X-Auth-Token", auto_error=False, description="The same token, OpenStack style."
)

_REFUSALS = {
    auth_repo.Refusal.UNKNOWN: "the token is not valid",
    auth_repo.Refusal.EXPIRED: "the token has expired",
    auth_repo.Refusal.REVOKED: "the token has been revoked",
}


def runtime_of(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def principal(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
    x_auth_token: Annotated[str | None, Security(_x_auth_token)] = None,
) -> Principal:
    token = x_auth_token
    if bearer is not None and bearer.credentials:
        token = bearer.credentials.strip()
    keystone: KeystoneAuth | None = getattr(request.app.state, "keystone", None)
    if keystone is not None:
        return _one_tenant_unsandboxed(request, keystone.principal(token))
    if not token:
        raise Unauthorized("a bearer token is required (Authorization: Bearer <token>)")
    rt = runtime_of(request)
    with rt.db.reading() as conn:
        who = auth_repo.resolve_token(conn, token, rt.clock.now())
    if isinstance(who, auth_repo.Refusal):
        raise Unauthorized(_REFUSALS[who])
    return _one_tenant_unsandboxed(request, who)


def _one_tenant_unsandboxed(request: Request, who: Principal) -> Principal:
    """Local nodes that are not both sandboxed (issue 29) and in networks of their own (issue
    39) can read Shoal's home or reach its database and take the server, so such a Shoal
    serves its admin only, never several projects."""
    why = runtime_of(request).capabilities.single_tenant
    if why is not None and not who.is_admin:
        raise Forbidden(
            f"this Shoal serves its admin only: {why} (docs/security.md says what it needs)"
        )
    return who


Caller = Annotated[Principal, Depends(principal)]

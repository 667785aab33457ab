"""Who is calling: a bearer token (or X-Auth-Token) resolved to a project.

With `auth = "keystone"` the token is a Keystone token, checked by `shoal.api.keystone`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from shoal.api.keystone import KeystoneAuth
from shoal.runtime import Runtime
from shoal.service.errors import Unauthorized
from shoal.store import auth as auth_repo
from shoal.store.records import Principal


def runtime_of(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def principal(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    x_auth_token: Annotated[str | None, Header()] = None,
) -> Principal:
    token = x_auth_token
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value:
            token = value.strip()
    keystone: KeystoneAuth | None = getattr(request.app.state, "keystone", None)
    if keystone is not None:
        return keystone.principal(token)
    if not token:
        raise Unauthorized("a bearer token is required (Authorization: Bearer <token>)")
    rt = runtime_of(request)
    with rt.db.reading() as conn:
        who = auth_repo.resolve_token(conn, token)
    if who is None:
        raise Unauthorized("the token is not valid")
    return who


Caller = Annotated[Principal, Depends(principal)]

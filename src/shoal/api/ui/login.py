"""Signing in to the dashboard with Keystone credentials, when Shoal runs in Keystone mode.

The page cannot ask Keystone itself (another origin, which the page's policy forbids, and often
not reachable from the operator's browser), so it sends the user name, password and project
here once; Shoal asks Keystone for a project-scoped token (`POST /v3/auth/tokens`) and hands
back only the token, which the page then uses like any other. The password is never stored or
logged. With Shoal's own tokens (`auth = "shoal"`) there is nothing to exchange: 404.
"""

from __future__ import annotations

import httpx
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from shoal.api.keystone import KeystoneAuth
from shoal.service.errors import ErrorKind, NotFound, ServiceError, Unauthorized

router = APIRouter(prefix="/ui/api")

_TIMEOUT_S = 15.0


class KeystoneUnavailable(ServiceError):
    kind = ErrorKind.UNAVAILABLE
    code = "keystone_unavailable"
    title = "Keystone unavailable"


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(min_length=1, max_length=255)
    password: str = Field(min_length=1, max_length=4096, repr=False)
    project: str = Field(min_length=1, max_length=255)
    domain: str = Field("Default", min_length=1, max_length=255)


class Token(BaseModel):
    token: str
    expires_at: str | None


def _keystone(request: Request) -> KeystoneAuth | None:
    found: KeystoneAuth | None = getattr(request.app.state, "keystone", None)
    return found


@router.get("/auth")
async def auth_mode(request: Request) -> dict[str, str]:
    """How to sign in here: `shoal` (a token) or `keystone` (a token, or credentials)."""
    return {"mode": "keystone" if _keystone(request) is not None else "shoal"}


def exchange(url: str, who: Credentials) -> Token:
    """A project-scoped token for `who` from the Keystone at `url` (…/v3)."""
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {
                    "user": {
                        "name": who.username,
                        "domain": {"name": who.domain},
                        "password": who.password,
                    }
                },
            },
            "scope": {"project": {"name": who.project, "domain": {"name": who.domain}}},
        }
    }
    try:
        r = httpx.post(f"{url}/auth/tokens", json=body, timeout=_TIMEOUT_S, trust_env=False)
    except httpx.HTTPError as e:
        raise KeystoneUnavailable(f"Keystone did not answer: {type(e).__name__}") from None
    if r.status_code in (400, 401, 403, 404):
        raise Unauthorized(
            "Keystone refused these credentials (user name, password, project or domain)",
            [{"path": "/username", "message": "not accepted by Keystone"}],
        )
    token = r.headers.get("X-Subject-Token")
    if r.status_code != 201 or not token:
        raise KeystoneUnavailable(f"Keystone answered {r.status_code}")
    expires = r.json().get("token", {}).get("expires_at")
    return Token(token=token, expires_at=expires if isinstance(expires, str) else None)


@router.post("/login")
async def login(who: Credentials, request: Request) -> Token:
    keystone = _keystone(request)
    if keystone is None:
        raise NotFound("this server uses Shoal tokens: sign in with one")
    return await run_in_threadpool(exchange, keystone.url, who)

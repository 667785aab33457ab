"""Keystone authentication (`auth = "keystone"`): X-Auth-Token validated by a real Keystone.

What keystonemiddleware.auth_token does for a WSGI service, done directly: the service user
(`keystone_user` in `keystone_project`) holds a token of its own through a keystoneauth1
session (re-authenticating when it expires), and each caller's token is checked with
`GET /v3/auth/tokens` (`X-Subject-Token`). A valid, project-scoped token makes its project the
tenant; the `admin` role makes the caller Shoal's admin. Answers are cached for
`keystone_cache_s` seconds (never past the token's own expiry); refusals are not cached.

Only Keystone saying the token is not valid is a 401. Keystone slow (past `keystone_timeout_s`),
unreachable, or failing (5xx, or refusing the service user) is a 503 with `Retry-After`, as
keystonemiddleware answers: a 401 there makes clients log in again, more load on a Keystone
already struggling.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from keystoneauth1 import session as ks_session
from keystoneauth1.exceptions import ClientException
from keystoneauth1.identity import v3

from shoal.service.errors import Unauthorized, Unavailable
from shoal.settings import Settings
from shoal.store import auth as auth_repo
from shoal.store.database import Database
from shoal.store.records import Principal
from shoal.telemetry import requestid

ADMIN_ROLE = "admin"
RETRY_AFTER_S = 5
_MAX_CACHED = 10_000


def identity_url(url: str) -> str:
    """Keystone's URL with /v3 at the end, whichever form was configured."""
    url = url.rstrip("/")
    return url if url.endswith("/v3") else f"{url}/v3"


@dataclass(frozen=True, slots=True)
class _Cached:
    principal: Principal
    until: float


class KeystoneAuth:
    """Validates Keystone tokens for one Shoal; thread-safe (FastAPI runs `principal` in a pool)."""

    def __init__(self, settings: Settings, db: Database) -> None:
        self.url = identity_url(settings.keystone_url)
        self.root = self.url.removesuffix("/v3")
        self.cache_s = settings.keystone_cache_s
        self.db = db
        self.challenge = f"Keystone uri='{self.root}'"
        plugin = v3.Password(
            auth_url=self.url,
            username=settings.keystone_user,
            password=settings.keystone_password,
            project_name=settings.keystone_project,
            user_domain_name=settings.keystone_domain,
            project_domain_name=settings.keystone_domain,
        )
        self.session = ks_session.Session(auth=plugin, timeout=settings.keystone_timeout_s)
        self._cache: dict[str, _Cached] = {}
        self._known_projects: set[str] = set()
        self._lock = threading.Lock()

    def refuse(self, message: str) -> Unauthorized:
        return Unauthorized(message, challenge=self.challenge)

    def principal(self, token: str | None) -> Principal:
        """The caller behind `token`, or Unauthorized (401, `WWW-Authenticate: Keystone`)."""
        if not token:
            raise self.refuse("a Keystone token is required (X-Auth-Token)")
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit.until > now:
            return hit.principal
        who, expires_in = self._validate(token)
        self._remember_project(who)
        until = now + max(0.0, min(self.cache_s, expires_in))
        with self._lock:
            if len(self._cache) >= _MAX_CACHED:
                self._cache = {k: v for k, v in self._cache.items() if v.until > now}
                if len(self._cache) >= _MAX_CACHED:
                    self._cache.clear()
            self._cache[key] = _Cached(who, until)
        return who

    def _validate(self, token: str) -> tuple[Principal, float]:
        try:
            resp = self.session.get(
                f"{self.url}/auth/tokens",
                headers={"X-Subject-Token": token},
                raise_exc=False,
                authenticated=True,
                # The caller's request id, so Keystone's log lines of this check carry it too.
                global_request_id=requestid.get(),
            )
        except ClientException as e:
            # Timeouts, refused connections, and the service user's own sign-in failing.
            raise Unavailable(
                f"the identity service could not validate the token: {type(e).__name__}",
                retry_after_s=RETRY_AFTER_S,
            ) from e
        if resp.status_code in (401, 404):
            raise self.refuse("the token is not valid")
        if resp.status_code != 200:
            raise Unavailable(
                f"the identity service answered {resp.status_code} validating the token",
                retry_after_s=RETRY_AFTER_S,
            )
        body: dict[str, Any] = resp.json().get("token", {})
        project = body.get("project") or {}
        project_id = project.get("id")
        if not project_id:
            raise self.refuse("the token is not scoped to a project")
        roles = {str(r.get("name", "")).lower() for r in body.get("roles") or []}
        who = Principal(project_id=str(project_id), is_admin=ADMIN_ROLE in roles)
        return who, _seconds_left(body.get("expires_at"))

    def _remember_project(self, who: Principal) -> None:
        """Shoal's tables refer to projects: the first call of a Keystone project records it."""
        if who.project_id in self._known_projects:
            return
        auth_repo.remember_project(
            self.db, who.project_id, f"keystone:{who.project_id}", time.time()
        )
        with self._lock:
            self._known_projects.add(who.project_id)


def _seconds_left(expires_at: object) -> float:
    if not isinstance(expires_at, str):
        return 0.0
    try:
        when = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return when.timestamp() - time.time()

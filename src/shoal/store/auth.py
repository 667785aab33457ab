"""Projects and bearer tokens. Tokens are stored only as SHA-256 hashes.

A token may carry an expiry and may be revoked; either makes it answer 401. Revoking keeps the
row (who had which token, and when it stopped) rather than forgetting it.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import Connection, RowMapping, insert, select, update
from sqlalchemy.exc import IntegrityError

from shoal.store.database import Database
from shoal.store.errors import NameTaken
from shoal.store.records import Principal
from shoal.store.tables import projects, tokens

ADMIN_PROJECT = "admin"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_project(conn: Connection, name: str, now: float) -> str:
    if conn.execute(select(projects.c.id).where(projects.c.name == name)).first():
        raise NameTaken("project", name)
    project_id = name if name == ADMIN_PROJECT else uuid.uuid4().hex
    conn.execute(insert(projects).values(id=project_id, name=name, created_at=now))
    return project_id


def project_id_by_name(conn: Connection, name: str) -> str | None:
    row = conn.execute(
        select(projects.c.id).where((projects.c.name == name) | (projects.c.id == name))
    ).first()
    return None if row is None else str(row[0])


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token without its secret."""

    id: str
    project_id: str
    name: str
    is_admin: bool
    created_at: float
    expires_at: float | None
    revoked_at: float | None


@dataclass(frozen=True, slots=True)
class Issued:
    secret: str
    info: TokenInfo


class Refusal(StrEnum):
    """Why a presented token does not authenticate."""

    UNKNOWN = "unknown"
    EXPIRED = "expired"
    REVOKED = "revoked"


def issue_token(
    conn: Connection,
    project_id: str,
    now: float,
    *,
    is_admin: bool = False,
    name: str = "",
    ttl_s: float | None = None,
) -> Issued:
    """A new token for the project; `ttl_s` None or 0: it never expires."""
    secret = secrets.token_urlsafe(32)
    info = TokenInfo(
        id=str(uuid.uuid4()),
        project_id=project_id,
        name=name,
        is_admin=is_admin,
        created_at=now,
        expires_at=now + ttl_s if ttl_s else None,
        revoked_at=None,
    )
    conn.execute(
        insert(tokens).values(
            id=info.id,
            token_hash=_hash(secret),
            project_id=project_id,
            is_admin=is_admin,
            name=name,
            created_at=now,
            expires_at=info.expires_at,
        )
    )
    return Issued(secret, info)


def resolve_token(conn: Connection, token: str, now: float) -> Principal | Refusal:
    """The caller a token stands for, or why it stands for no one."""
    row = conn.execute(
        select(
            tokens.c.project_id, tokens.c.is_admin, tokens.c.expires_at, tokens.c.revoked_at
        ).where(tokens.c.token_hash == _hash(token))
    ).first()
    if row is None:
        return Refusal.UNKNOWN
    if row.revoked_at is not None:
        return Refusal.REVOKED
    if row.expires_at is not None and row.expires_at <= now:
        return Refusal.EXPIRED
    return Principal(project_id=row.project_id, is_admin=bool(row.is_admin))


def _info(row: RowMapping) -> TokenInfo:
    return TokenInfo(
        id=row["id"],
        project_id=row["project_id"],
        name=row["name"],
        is_admin=bool(row["is_admin"]),
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
    )


_INFO = (
    tokens.c.id,
    tokens.c.project_id,
    tokens.c.name,
    tokens.c.is_admin,
    tokens.c.created_at,
    tokens.c.expires_at,
    tokens.c.revoked_at,
)


def get_token(conn: Connection, token_id: str) -> TokenInfo | None:
    row = conn.execute(select(*_INFO).where(tokens.c.id == token_id)).mappings().first()
    return None if row is None else _info(row)


def list_tokens(conn: Connection, project_id: str) -> list[TokenInfo]:
    q = select(*_INFO).where(tokens.c.project_id == project_id).order_by(tokens.c.created_at)
    return [_info(r) for r in conn.execute(q).mappings()]


def revoke_token(conn: Connection, token_id: str, now: float) -> TokenInfo | None:
    """Revoke the token (a second revoke keeps the first time); None if there is no such token."""
    conn.execute(
        update(tokens)
        .where(tokens.c.id == token_id, tokens.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return get_token(conn, token_id)


def ensure_admin(conn: Connection, now: float) -> str | None:
    """Create the admin project and its first token if missing; the new token, else None."""
    if project_id_by_name(conn, ADMIN_PROJECT) is not None:
        return None
    project_id = create_project(conn, ADMIN_PROJECT, now)
    # The bootstrap token never expires: it is the operator's way back in (revocable).
    return issue_token(conn, project_id, now, is_admin=True, name="bootstrap").secret


def remember_project(db: Database, project_id: str, name: str, now: float) -> None:
    """`ensure_project` in its own transaction, tolerating a concurrent first call that
    recorded the same project a moment before."""
    try:
        with db.transaction() as conn:
            ensure_project(conn, project_id, name, now)
    except IntegrityError:
        pass


def ensure_project(conn: Connection, project_id: str, name: str, now: float) -> None:
    """Make sure a project row with this id exists (an external one, e.g. from Keystone)."""
    if conn.execute(select(projects.c.id).where(projects.c.id == project_id)).first():
        return
    taken = conn.execute(select(projects.c.id).where(projects.c.name == name)).first()
    conn.execute(
        insert(projects).values(id=project_id, name=project_id if taken else name, created_at=now)
    )

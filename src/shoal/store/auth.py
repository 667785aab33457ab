"""Projects and bearer tokens. Tokens are stored only as SHA-256 hashes."""

from __future__ import annotations

import hashlib
import secrets
import uuid

from sqlalchemy import Connection, insert, select

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


def issue_token(
    conn: Connection, project_id: str, now: float, *, is_admin: bool = False, name: str = ""
) -> str:
    token = secrets.token_urlsafe(32)
    conn.execute(
        insert(tokens).values(
            id=str(uuid.uuid4()),
            token_hash=_hash(token),
            project_id=project_id,
            is_admin=is_admin,
            name=name,
            created_at=now,
        )
    )
    return token


def resolve_token(conn: Connection, token: str) -> Principal | None:
    row = conn.execute(
        select(tokens.c.project_id, tokens.c.is_admin).where(tokens.c.token_hash == _hash(token))
    ).first()
    return None if row is None else Principal(project_id=row[0], is_admin=bool(row[1]))


def ensure_admin(conn: Connection, now: float) -> str | None:
    """Create the admin project and its first token if missing; the new token, else None."""
    if project_id_by_name(conn, ADMIN_PROJECT) is not None:
        return None
    project_id = create_project(conn, ADMIN_PROJECT, now)
    return issue_token(conn, project_id, now, is_admin=True, name="bootstrap")


def ensure_project(conn: Connection, project_id: str, name: str, now: float) -> None:
    """Make sure a project row with this id exists (an external one, e.g. from Keystone)."""
    if conn.execute(select(projects.c.id).where(projects.c.id == project_id)).first():
        return
    taken = conn.execute(select(projects.c.id).where(projects.c.name == name)).first()
    conn.execute(
        insert(projects).values(id=project_id, name=project_id if taken else name, created_at=now)
    )

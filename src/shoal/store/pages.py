"""Keyset pages of a list in (created_at, id) order (issue 23): a page after a marker costs the
same at any depth, and a list never reads more than one page and one row past it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, RowMapping, Select, Table, tuple_


def page_rows(
    conn: Connection, table: Table, q: Select[Any], limit: int, marker: str | None
) -> tuple[list[RowMapping], bool] | None:
    """Up to `limit` rows of `q` (a select of `table`, already filtered) after the row whose id
    is `marker`, and whether more follow; None when `marker` names no row of that list."""
    if marker is not None:
        at = conn.execute(
            q.with_only_columns(table.c.created_at, table.c.id).where(table.c.id == marker)
        ).first()
        if at is None:
            return None
        q = q.where(tuple_(table.c.created_at, table.c.id) > tuple_(at[0], at[1]))
    q = q.order_by(None).order_by(table.c.created_at, table.c.id).limit(limit + 1)
    rows = list(conn.execute(q).mappings())
    return rows[:limit], len(rows) > limit

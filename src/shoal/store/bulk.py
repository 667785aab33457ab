"""Bulk inserts: PostgreSQL's COPY for the thousands of rows one plan writes (issue 23).

A 100,000-node create writes 100,000 node rows and as many actions in its planning
transaction. An `executemany` through SQLAlchemy compiles, binds and sends each row on its own
(about 0.1 ms of CPU a row, most of the planner's time); COPY streams them as text in one
statement. Other databases (SQLite) keep the batched `executemany`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from enum import Enum

from sqlalchemy import JSON, Connection, Table, insert

_BATCH = 2000
_COPY_FROM = 100
"""Fewer rows than this go through `executemany`: COPY pays off on a plan, not on one row."""


def bulk_insert(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]]) -> None:
    """Insert `rows` (each with the same columns) into `table` in `conn`'s transaction.

    Columns left out of the rows take their server defaults on PostgreSQL, so give every
    column whose default is only SQLAlchemy's (`default=`) a value."""
    if not rows:
        return
    if conn.dialect.name != "postgresql" or len(rows) < _COPY_FROM:
        for start in range(0, len(rows), _BATCH):
            conn.execute(insert(table), list(rows[start : start + _BATCH]))
        return
    names = list(rows[0])
    first = rows[0]
    converted = [
        (i, f) for i, n in enumerate(names) if (f := _text_of(table, n, first[n])) is not None
    ]
    listed = ", ".join(conn.dialect.identifier_preparer.quote(n) for n in names)
    raw = conn.connection.driver_connection
    assert raw is not None
    cursor = raw.cursor()
    try:
        with cursor.copy(f"COPY {table.name} ({listed}) FROM STDIN") as copy:
            for row in rows:
                values = [row[n] for n in names]
                for i, f in converted:
                    values[i] = f(values[i])
                copy.write_row(values)
    finally:
        cursor.close()


def _enum_value(value: object) -> object:
    return value.value if isinstance(value, Enum) else value


def _text_of(table: Table, name: str, sample: object) -> Callable[[object], object] | None:
    """How one column's values are written, None when as they are: JSON columns as their
    JSON text (a value the plan shares between rows, like a group's profile, is encoded once;
    an empty object is never encoded), enums as their values (COPY would write their names)
    in a column whose first row holds one."""
    if isinstance(table.c[name].type, JSON):
        seen: dict[int, tuple[object, str]] = {}

        def encode(value: object) -> object:
            if value is None:
                return None
            if value == {}:
                return "{}"
            hit = seen.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
            text = json.dumps(value)
            seen[id(value)] = (value, text)
            return text

        return encode
    return _enum_value if isinstance(sample, Enum) else None

"""Bulk inserts and updates: PostgreSQL's COPY for the thousands of rows one plan writes, one
`UPDATE ... FROM json_to_recordset(rows)` for the thousands of rows a flush of node work
changes (issue 23).

A 100,000-node create writes 100,000 node rows and as many actions in its planning
transaction. An `executemany` through SQLAlchemy compiles, binds and sends each row on its own
(about 0.1 ms of CPU a row, most of the planner's time); COPY streams them as text in one
statement. Other databases (SQLite) keep the batched `executemany`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any

from sqlalchemy import (
    ARRAY,
    JSON,
    Column,
    ColumnElement,
    Connection,
    Table,
    any_,
    bindparam,
    insert,
    update,
)

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
    if len(rows) >= _ANALYZE_FROM:
        _analyze_if_stale(conn, table, len(rows))


def insert_from_json(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]]) -> None:
    """`bulk_insert` of a flush's rows (each with the same columns, in order: a serial key
    follows it). On PostgreSQL, fewer than `_COPY_FROM` rows are one `INSERT ... SELECT` from
    the rows as one JSON document of arrays. Issue 23: an engine writes from a few to 2,000
    events per claim and per flush; below COPY's threshold `executemany` bound each row,
    40-70 us of CPU a row at 10-30 rows against 16-26 us so (from 100 rows on, COPY and this
    cost alike, 2.5-4.5 us a row). Elsewhere, or with a value JSON cannot hold (a NaN),
    `bulk_insert`."""
    if not rows:
        return
    names = list(rows[0])
    document = None
    if conn.dialect.name == "postgresql" and len(rows) < _COPY_FROM:
        try:
            document = json.dumps(
                [[r[n] for n in names] for r in rows], default=_json_value, allow_nan=False
            )
        except (TypeError, ValueError):
            document = None
    if document is None:
        bulk_insert(conn, table, rows)
        return
    quote = conn.dialect.identifier_preparer.quote
    values = ", ".join(
        f"(e->{i})::{sql}" if sql == "JSON" else f"(e->>{i})::{sql}"
        for i, sql in enumerate(_sql_type(conn, table, n) for n in names)
    )
    conn.exec_driver_sql(
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(n) for n in names)}) "
        f"SELECT {values} FROM json_array_elements(%(rows)s::json) WITH ORDINALITY AS u(e, n) "
        "ORDER BY n",
        {"rows": document},
    )


_ANALYZE_FROM = 10_000
"""A batch this large may leave the table's statistics far behind (a 100,000-node plan)."""


def _analyze_if_stale(conn: Connection, table: Table, added: int) -> None:
    """ANALYZE `table` when this insert at least doubles what its statistics say it holds (or
    it was never analyzed): issue 23, the first page of a 100,000-node cluster right after its
    create took 1.3 s because PostgreSQL, its statistics counting the table empty, picked the
    index on live names and sorted every node instead of reading the page's index in order.
    Autovacuum's ANALYZE comes later (or, switched off, never). In the inserting transaction,
    whose own rows ANALYZE counts; a table that only doubles is analyzed a few times at most."""
    known = conn.exec_driver_sql(
        "SELECT reltuples FROM pg_class WHERE oid = %(t)s::regclass", {"t": table.name}
    ).scalar()
    if known is None or known < added:
        conn.exec_driver_sql(f"ANALYZE {conn.dialect.identifier_preparer.quote(table.name)}")


_IN_CHUNK = 1000
"""Keys per `IN (...)` list: well under SQLite's bound on parameters."""


def in_keys(conn: Connection, column: Column[Any], keys: Sequence[object]) -> ColumnElement[bool]:
    """`column IN keys`, on PostgreSQL as `column = ANY(array)`: one parameter whatever the
    count. An `IN` of 1,000 keys is rendered, bound and parsed key by key (issue 23: a
    claim's node statuses spent most of their CPU turning one such statement into SQL);
    the array's statement is the same text each time, compiled and converted once. Other
    databases (SQLite: at most `_IN_CHUNK` keys a call) keep the `IN` list."""
    if conn.dialect.name == "postgresql":
        return column == any_(bindparam(None, list(keys), type_=ARRAY(column.type)))
    return column.in_(keys)


def key_chunk(conn: Connection, other: int = _IN_CHUNK) -> int:
    """Keys one statement matches by `in_keys`: any number in one array on PostgreSQL,
    `other` elsewhere."""
    return 1_000_000 if conn.dialect.name == "postgresql" else other


def bulk_update(
    conn: Connection,
    table: Table,
    key: str,
    rows: Sequence[Mapping[str, object]],
    constants: Mapping[str, object] | None = None,
) -> None:
    """On the row of `table` whose `key` column equals each row's `key`, set that row's other
    columns (every row names the same columns) and `constants`, in `conn`'s transaction.

    A column every row sets alike is one value. Rows that all set the same values (a claim:
    one status, one time) are one `UPDATE ... WHERE key IN (...)`. Otherwise a batch is one
    statement whose varying values come as one array per column (`FROM unnest(...)`): an
    `executemany` converts, binds and sends each row on its own, a cost per node that was
    most of a flush's CPU. On PostgreSQL every batch is first tried as one JSON document
    (`_update_from_json`). Other databases (SQLite) and single rows keep the
    `executemany`."""
    if not rows:
        return
    if conn.dialect.name == "postgresql" and _update_from_json(conn, table, key, rows, constants):
        return
    fixed = dict(constants or {})
    first = rows[0]
    names: list[str] = []
    for n in first:
        if n == key:
            continue
        if n not in fixed and all(r[n] == first[n] for r in rows):
            # The same in every row (a flush's status, its time): one parameter, not an
            # array of thousands dumped element by element (issue 23).
            fixed[n] = first[n]
        else:
            names.append(n)
    if not names:
        values = fixed
        if not values:
            return
        ids = [r[key] for r in rows]
        chunk = key_chunk(conn)
        for start in range(0, len(ids), chunk):
            conn.execute(
                update(table)
                .where(in_keys(conn, table.c[key], ids[start : start + chunk]))
                .values(**values)
            )
        return
    if conn.dialect.name == "postgresql" and len(rows) > 1:
        # Small batches too: a flush finds a few dozen finished calls as often as thousands.
        _update_from_arrays(conn, table, key, names, rows, fixed)
        return
    stmt = (
        update(table)
        .where(table.c[key] == bindparam("b__key"))
        .values(**{n: bindparam(f"b_{n}") for n in names}, **fixed)
    )
    batch = [{"b__key": r[key], **{f"b_{n}": r[n] for n in names}} for r in rows]
    for start in range(0, len(batch), _BATCH):
        conn.execute(stmt, batch[start : start + _BATCH])


def _update_from_json(
    conn: Connection,
    table: Table,
    key: str,
    rows: Sequence[Mapping[str, object]],
    constants: Mapping[str, object] | None,
) -> bool:
    """`bulk_update` on PostgreSQL: the rows as one JSON document, read back by
    `json_to_recordset` (issue 23: a flush's arrays went through psycopg's Python array
    dumper, a regex substitution per element, and every column was compared row by row to
    find the ones set alike; `json.dumps` writes them all in C: a flush of 2,000 nodes went
    from 48 to 36 us of CPU a node). False (nothing done) when a value has no JSON form
    (a NaN): the arrays then."""
    try:
        document = json.dumps(
            rows if isinstance(rows, list) else list(rows), default=_json_value, allow_nan=False
        )
    except (TypeError, ValueError):
        return False
    quote = conn.dialect.identifier_preparer.quote
    fixed = dict(constants or {})
    names = [n for n in rows[0] if n != key and n not in fixed]
    typed = ", ".join(f"{quote(n)} {_sql_type(conn, table, n)}" for n in [key, *names])
    sets = [f"{quote(n)} = u.{quote(n)}" for n in names]
    params: dict[str, object] = {"rows": document}
    for j, (n, value) in enumerate(fixed.items()):
        convert = _text_of(table, n, value) or _enum_value
        params[f"c{j}"] = convert(value)
        sets.append(f"{quote(n)} = %(c{j})s::{_sql_type(conn, table, n)}")
    if not sets:
        return True
    conn.exec_driver_sql(
        f"UPDATE {quote(table.name)} AS t SET {', '.join(sets)} "
        f"FROM json_to_recordset(%(rows)s::json) AS u({typed}) "
        f"WHERE t.{quote(key)} = u.{quote(key)}",
        params,
    )
    return True


def _json_value(value: object) -> object:
    """`json.dumps`'s fallback: enums as their values."""
    if isinstance(value, Enum):
        return value.value
    raise TypeError(f"no JSON form for {type(value).__name__}")


def _sql_type(conn: Connection, table: Table, name: str) -> str:
    return str(table.c[name].type.compile(dialect=conn.dialect))


def _update_from_arrays(
    conn: Connection,
    table: Table,
    key: str,
    names: list[str],
    rows: Sequence[Mapping[str, object]],
    fixed: Mapping[str, object],
) -> None:
    quote = conn.dialect.identifier_preparer.quote
    columns = [key, *names]
    values: dict[str, list[object]] = {}
    arrays: list[str] = []
    for i, n in enumerate(columns):
        convert = _text_of(table, n, rows[0][n]) or _enum_value
        values[f"a{i}"] = [convert(r[n]) for r in rows]
        # Cast to the column's own type: a NULL or a JSON text becomes the column's value.
        arrays.append(f"%(a{i})s::{table.c[n].type.compile(dialect=conn.dialect)}[]")
    sets = [f"{quote(n)} = u.{quote(n)}" for n in names]
    constants: dict[str, object] = {}
    for j, (n, value) in enumerate(fixed.items()):
        convert = _text_of(table, n, value) or _enum_value
        constants[f"c{j}"] = convert(value)
        sets.append(f"{quote(n)} = %(c{j})s::{table.c[n].type.compile(dialect=conn.dialect)}")
    listed = ", ".join(quote(n) for n in columns)
    sql = (
        f"UPDATE {quote(table.name)} AS t SET {', '.join(sets)} "
        f"FROM unnest({', '.join(arrays)}) AS u({listed}) WHERE t.{quote(key)} = u.{quote(key)}"
    )
    for start in range(0, len(rows), _BATCH):
        chunk = {k: v[start : start + _BATCH] for k, v in values.items()}
        conn.exec_driver_sql(sql, {**constants, **chunk})


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

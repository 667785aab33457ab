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
from itertools import repeat
from operator import is_, itemgetter
from typing import Any, cast

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
COPY_FROM = 100
"""Fewer rows than this go through `executemany`: COPY pays off on a plan, not on one row."""


def bulk_insert(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]]) -> None:
    """Insert `rows` (each with the same columns) into `table` in `conn`'s transaction.

    Columns left out of the rows take their server defaults on PostgreSQL, so give every
    column whose default is only SQLAlchemy's (`default=`) a value."""
    if not rows:
        return
    if conn.dialect.name != "postgresql" or len(rows) < COPY_FROM:
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


def insert_columns(
    conn: Connection, table: Table, columns: Mapping[str, Sequence[object]], count: int
) -> None:
    """Insert `count` rows into `table`, given column by column (`columns[name][i]` is row
    `i`'s value), in `conn`'s transaction: `bulk_insert`'s rows, without a dict per row.

    On PostgreSQL the COPY's text is made a column at a time (issue 23: `bulk_insert` spent
    some 12 us a node row and 20 us an action row, most of a plan's writing, on a dict, a
    conversion and psycopg's formatting per row and value): a column every row shares is
    formatted once, a column of plain strings (ids, names) is written as it is once one scan
    found nothing to escape, JSON values share the text of the objects they share (a group's
    profile)."""
    if count <= 0:
        return
    names = list(columns)
    if conn.dialect.name != "postgresql" or count < COPY_FROM:
        rows = [
            dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)
        ]
        bulk_insert(conn, table, rows)
        return
    shared: list[str] = []
    varying: list[str] = []
    for n in names:
        col = columns[n]
        if len(col) != count:
            raise ValueError(f"column {n}: {len(col)} values for {count} rows")
        first = col[0]
        # The very same object in every row (the plan's project, time, status): formatted
        # once. Equal is not enough: 1 == True == 1.0, and equal dicts may differ in order.
        (shared if all(map(is_, col, repeat(first))) else varying).append(n)
    json_texts = _JsonTexts()
    # Shared columns last, all of them one text ending each line.
    tail = "".join("\t" + _copy_texts(table, n, [columns[n][0]], json_texts)[0] for n in shared)
    listed = ", ".join(conn.dialect.identifier_preparer.quote(n) for n in [*varying, *shared])
    raw = conn.connection.driver_connection
    assert raw is not None
    cursor = raw.cursor()
    try:
        with cursor.copy(f"COPY {table.name} ({listed}) FROM STDIN") as copy:
            for start in range(0, count, _COPY_CHUNK):
                texts = [
                    _copy_texts(table, n, columns[n][start : start + _COPY_CHUNK], json_texts)
                    for n in varying
                ]
                end = tail + "\n"
                if texts:
                    copy.write(end.join(map("\t".join, zip(*texts, strict=True))) + end)
                else:
                    copy.write((tail[1:] + "\n") * min(_COPY_CHUNK, count - start))
    finally:
        cursor.close()
    if count >= _ANALYZE_FROM:
        _analyze_if_stale(conn, table, count)


_COPY_CHUNK = 5000
"""Rows a `insert_columns` write sends: the text of a whole 100,000-row plan at once would be
tens of megabytes."""

_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_texts(
    table: Table, name: str, values: Sequence[object], json_texts: _JsonTexts
) -> Sequence[str]:
    """`values` of column `name` as COPY's text format writes them."""
    if isinstance(table.c[name].type, JSON):
        texts = [json_texts.text(v) for v in values]
        # JSON's text (ASCII, escaped) has no tab or line break, only backslashes to double.
        if "\\" in "".join(texts):
            texts = [t.replace("\\", "\\\\") for t in texts]
        if None in values:
            texts = ["\\N" if v is None else t for v, t in zip(values, texts, strict=True)]
        return texts
    types = set(map(type, values))
    nulls = type(None) in types
    if all(issubclass(t, str) for t in types if t is not type(None)):
        # Strings (a str enum's text is its value): as they are, unless one scan of the
        # column finds something to escape.
        strings = cast("Sequence[str]", values)
        escape = _needs_escapes(
            "".join(v for v in strings if v is not None) if nulls else "".join(strings)
        )
        if not nulls and not escape:
            return strings
        return [
            "\\N" if v is None else v.translate(_COPY_ESCAPES) if escape else v for v in strings
        ]
    texts = [_copy_text(v) for v in values]
    if str in types or any(issubclass(t, str) for t in types):
        return [
            t.translate(_COPY_ESCAPES) if isinstance(v, str) else t
            for v, t in zip(values, texts, strict=True)
        ]
    return texts


def _needs_escapes(text: str) -> bool:
    return "\\" in text or "\t" in text or "\n" in text or "\r" in text


def _copy_text(value: object) -> str:
    """One value of a column that is not JSON, unescaped."""
    if value is None:
        return "\\N"
    if isinstance(value, str):
        return value  # a str enum too: its text is its value
    if isinstance(value, Enum):
        return _copy_text(value.value)
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float):
        return repr(value)
    raise TypeError(f"no COPY text for {type(value).__name__}")


class _JsonTexts:
    """JSON texts, as `json.dumps` writes them, of one insert's values: an object two rows
    share (a group's profile) is encoded once; a row's own object (an action's inputs) is
    written key by key around the texts of what it shares."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[object, str]] = {}
        self._keys: dict[str, str] = {}
        self._last: tuple[object, str] = (None, "null")
        """The last row's value and its text: consecutive rows often share theirs (a group's
        nodes, their profile); rows' own objects are not kept beyond the next row."""

    def text(self, value: object) -> str:
        last, text = self._last
        if value is last:
            return text
        if type(value) is not dict or not value:
            return self._whole(value)
        text = self._members(value)
        self._last = (value, text)
        return text

    def _members(self, value: dict[object, object]) -> str:
        parts: list[str] = []
        for k, v in value.items():
            if type(k) is not str:
                return self._whole(value)  # json.dumps turns other keys into strings
            key = self._keys.get(k)
            if key is None:
                key = self._keys[k] = _json_str(k)
            if type(v) is str:
                parts.append(f"{key}: {_json_str(v)}")
            elif v is None:
                parts.append(f"{key}: null")
            else:
                parts.append(f"{key}: {self._whole(v)}")
        return "{" + ", ".join(parts) + "}"

    def _whole(self, value: object) -> str:
        if value == {}:
            return "{}"
        hit = self._seen.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = json.dumps(value)
        if isinstance(value, dict | list):
            # Kept with its text: its id names no other object while this insert runs.
            self._seen[id(value)] = (value, text)
        return text


_json_str: Callable[[str], str] = json.encoder.encode_basestring_ascii
"""`json.dumps` of a str (its default, ASCII), without the encoder made per call."""


def insert_from_json(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]]) -> None:
    """`bulk_insert` of a flush's rows (each with the same columns, in order: a serial key
    follows it). On PostgreSQL, fewer than `COPY_FROM` rows are one `INSERT ... SELECT` from
    the rows as one JSON document of arrays. Issue 23: an engine writes from a few to 2,000
    events per claim and per flush; below COPY's threshold `executemany` bound each row,
    40-70 us of CPU a row at 10-30 rows against 16-26 us so (from 100 rows on, COPY and this
    cost alike, 2.5-4.5 us a row). Elsewhere, or with a value JSON cannot hold (a NaN),
    `bulk_insert`."""
    if not rows:
        return
    names = list(rows[0])
    document = None
    if conn.dialect.name == "postgresql" and len(rows) < COPY_FROM:
        try:
            document = json.dumps(
                list(map(itemgetter(*names) if len(names) > 1 else _single(names[0]), rows)),
                default=_json_value,
                allow_nan=False,
                check_circular=False,
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


def update_rows(
    conn: Connection,
    table: Table,
    key: str,
    names: Sequence[str],
    rows: Sequence[Sequence[object]],
) -> None:
    """`bulk_update` of rows given as tuples: each row's `key` value, then its values of the
    columns `names`, in order (issue 23: a flush made two dicts per node for `bulk_update`,
    and `_update_from_json` read them back into a tuple each). On PostgreSQL the tuples are
    the JSON document as they are; elsewhere, or with a value JSON cannot hold, the dicts."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        try:
            document = json.dumps(rows, default=_json_value, allow_nan=False, check_circular=False)
        except (TypeError, ValueError):
            document = None
        if document is not None:
            _update_json_document(conn, table, [key, *names], document, {})
            return
    columns = [key, *names]
    bulk_update(conn, table, key, [dict(zip(columns, r, strict=True)) for r in rows])


def _update_from_json(
    conn: Connection,
    table: Table,
    key: str,
    rows: Sequence[Mapping[str, object]],
    constants: Mapping[str, object] | None,
) -> bool:
    """`bulk_update` on PostgreSQL: the rows as one JSON document of arrays (the key, then the
    other columns), read back by position (issue 23: a flush's arrays went through psycopg's
    Python array dumper, a regex substitution per element, and every column was compared row
    by row to find the ones set alike; `json.dumps` writes them all in C: a flush of 2,000
    nodes went from 48 to 36 us of CPU a node). False (nothing done) when a value has no
    JSON form (a NaN): the arrays then."""
    fixed = dict(constants or {})
    columns = [key, *(n for n in rows[0] if n != key and n not in fixed)]
    # Issue 23: each row as an array, not an object: `json.dumps` wrote every row's keys
    # again, 3.9 us a node row against 1.1 us so; PostgreSQL reads the values by position.
    values = itemgetter(*columns) if len(columns) > 1 else _single(key)
    try:
        document = json.dumps(
            list(map(values, rows)), default=_json_value, allow_nan=False, check_circular=False
        )
    except (TypeError, ValueError):
        return False
    _update_json_document(conn, table, columns, document, fixed)
    return True


def _update_json_document(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    document: str,
    fixed: Mapping[str, object],
) -> None:
    """Set `columns[1:]` and `fixed` on the rows of `table` whose `columns[0]` matches a
    row of `document` (a JSON array of arrays, by position)."""
    key = columns[0]
    quote = conn.dialect.identifier_preparer.quote
    typed = ", ".join(
        f"(e->{i})::{sql} AS {quote(n)}" if sql == "JSON" else f"(e->>{i})::{sql} AS {quote(n)}"
        for i, (n, sql) in enumerate((n, _sql_type(conn, table, n)) for n in columns)
    )
    sets = [f"{quote(n)} = u.{quote(n)}" for n in columns[1:]]
    params: dict[str, object] = {"rows": document}
    for j, (n, value) in enumerate(fixed.items()):
        convert = _text_of(table, n, value) or _enum_value
        params[f"c{j}"] = convert(value)
        sets.append(f"{quote(n)} = %(c{j})s::{_sql_type(conn, table, n)}")
    if not sets:
        return
    conn.exec_driver_sql(
        f"UPDATE {quote(table.name)} AS t SET {', '.join(sets)} "
        f"FROM (SELECT {typed} FROM json_array_elements(%(rows)s::json) AS e) AS u "
        f"WHERE t.{quote(key)} = u.{quote(key)}",
        params,
    )


def _single(key: str) -> Callable[[Mapping[str, object]], tuple[object, ...]]:
    return lambda row: (row[key],)


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

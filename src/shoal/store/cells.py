"""Typed reads of one cell of a row selected by position.

Rows read by position (the scale paths select bare columns, not ORM objects) come back as
`object`; these narrow a cell to the type its column holds, and fail loudly if the database
answered something else, instead of a cast the type checker is told to ignore.
"""

from __future__ import annotations


def integer(cell: object) -> int:
    if isinstance(cell, bool) or not isinstance(cell, int):
        raise TypeError(f"expected an integer column, read {type(cell).__name__}")
    return cell


def real(cell: object) -> float:
    if isinstance(cell, bool) or not isinstance(cell, int | float):
        raise TypeError(f"expected a numeric column, read {type(cell).__name__}")
    return float(cell)


def real_or_none(cell: object) -> float | None:
    return None if cell is None else real(cell)

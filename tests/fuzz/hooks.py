"""Schemathesis hooks for the fuzz run (loaded through SCHEMATHESIS_HOOKS).

A long poll (`wait`) is cut to a fraction of a second: the fuzzer must not sit out `wait=60`
on every example; the long poll itself is tested in tests/api.
"""

from __future__ import annotations

from typing import Any

import schemathesis

MAX_WAIT_S = 0.2


@schemathesis.hook
def map_query(context: Any, query: dict[str, Any] | None) -> dict[str, Any] | None:
    if isinstance(query, dict) and "wait" in query:
        query["wait"] = MAX_WAIT_S
    return query

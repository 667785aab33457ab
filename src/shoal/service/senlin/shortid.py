"""Senlin's short ids: its clients list ids cut to 8 characters, and Senlin finds an object by
its id, its name, or a unique prefix of its id. Clusters and nodes have their own lookups; this
is the prefix step for the rest."""

from __future__ import annotations

from collections.abc import Iterable

from shoal.service.senlin.errors import BadRequest


def by_short_id(ids: Iterable[str], ref: str) -> str | None:
    """The one id that starts with `ref`; None if none does, 400 if several do."""
    found = [i for i in ids if i.startswith(ref)]
    if len(found) > 1:
        raise BadRequest(
            f"Multiple results found matching the query criteria '{ref}'. Please be more specific."
        )
    return found[0] if found else None

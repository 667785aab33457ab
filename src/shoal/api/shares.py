"""Fair shares of the server's held-open requests: event streams and long polls.

Each one held open costs the server a poll loop for as long as the client stays; one token
holding 500 streams slowed every other tenant's calls about 15x. So each token, and each
project, may hold only so many at once (settings `max_streams_*`, `max_long_polls_*`); past
that the request is refused at once with 429, `Retry-After`, and the limit in the error's
details. Counts are this process's (a server's own load is what they protect).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from fastapi import Request

from shoal.service.errors import TooMany
from shoal.store.records import Principal

RETRY_AFTER_S = 5


@dataclass(frozen=True, slots=True)
class ShareLimits:
    per_token: int
    per_project: int


@dataclass(slots=True)
class Held:
    """One held request's place in its counts; `release` is idempotent."""

    counts: dict[tuple[str, str], int]
    keys: tuple[tuple[str, str], ...]
    released: bool = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        for key in self.keys:
            left = self.counts.get(key, 0) - 1
            if left > 0:
                self.counts[key] = left
            else:
                self.counts.pop(key, None)


@dataclass(slots=True)
class Shares:
    """Counts of one kind of held request (event streams, or long polls), by token and project.
    Used on the event loop only, so no lock."""

    what: str
    """In words, plural: "event streams"."""
    limits: ShareLimits
    counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def take(self, request: Request, who: Principal) -> Held:
        """A place for this request, or TooMany (429) naming the limit it is over."""
        keys = (("token", _token_key(request)), ("project", who.project_id))
        for (scope, key), limit in zip(
            keys, (self.limits.per_token, self.limits.per_project), strict=True
        ):
            used = self.counts.get((scope, key), 0)
            if used >= limit:
                raise TooMany(
                    f"this {scope} already holds {used} {self.what}, its limit; "
                    f"close one or try again later",
                    [
                        {
                            "path": "",
                            "message": f"at most {limit} {self.what} per {scope}",
                            "limit": limit,
                            "in_use": used,
                            "scope": scope,
                        }
                    ],
                    retry_after_s=RETRY_AFTER_S,
                )
        for held in keys:
            self.counts[held] = self.counts.get(held, 0) + 1
        return Held(self.counts, keys)


def _token_key(request: Request) -> str:
    """The caller's token, hashed (the counts never hold a secret)."""
    raw = request.headers.get("x-auth-token") or request.headers.get("authorization") or ""
    return hashlib.sha256(raw.strip().encode()).hexdigest()[:32]


def shares_of(request: Request, kind: str) -> Shares:
    found: Shares = getattr(request.app.state, kind)
    return found

"""Refusals, as types: each says what kind of refusal it is and every problem found.

The service knows nothing of HTTP: a refusal has a kind (`ErrorKind`), a stable code, a title,
a message and its problems (`Problem` values: a JSON pointer and a sentence each, which a
refusal may extend with facts, as a quota names its limit and use). The API
maps kinds to status codes at its edge (`api/errors.py`), as httpx maps transport errors at its.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from shoal.model.problems import Problem


class ErrorKind(enum.Enum):
    BAD_REQUEST = "bad_request"
    INVALID = "invalid"
    """The input is well-formed but wrong (every problem named)."""
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    """The request clashes with the current state (busy, below a minimum, cannot be placed)."""
    FORBIDDEN = "forbidden"
    UNAUTHORIZED = "unauthorized"
    UNAVAILABLE = "unavailable"
    """Something the service depends on (Keystone) does not answer."""
    TOO_LARGE = "too_large"
    """A body over its limit (an agent's signal)."""
    TOO_MANY = "too_many"
    """Over a caller's fair share (concurrent streams or long polls): come back later."""


class ServiceError(Exception):
    kind: ClassVar[ErrorKind] = ErrorKind.BAD_REQUEST
    code = "bad_request"
    title = "Bad request"
    retry_after_s: int | None = None
    """When to ask again (the API's Retry-After); None: no such hint."""

    def __init__(
        self, message: str, details: Sequence[Problem | Mapping[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        # A detail is a Problem; some refusals add facts to it (a quota's limit and use).
        self.details: list[dict[str, Any]] = [
            p.as_dict() if isinstance(p, Problem) else dict(p) for p in details or ()
        ]

    @property
    def problems(self) -> list[Problem]:
        """Where and what, for each detail."""
        return [Problem(str(d.get("path", "")), str(d.get("message", ""))) for d in self.details]

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "code": self.code,
                "title": self.title,
                "message": self.message,
                "details": self.details,
            }
        }


class Invalid(ServiceError):
    kind = ErrorKind.INVALID
    code = "invalid_document"
    title = "Invalid input"


class NotFound(ServiceError):
    kind = ErrorKind.NOT_FOUND
    code = "not_found"
    title = "Not found"


class Conflict(ServiceError):
    kind = ErrorKind.CONFLICT
    code = "conflict"
    title = "Conflict"


class ClusterBusy(Conflict):
    """The cluster is locked by another action (`action_id`, when known): every check that
    finds it busy raises this type, so each face answers one busy condition one way."""

    def __init__(self, cluster: str, action_id: str | None) -> None:
        holder = f"action {action_id}" if action_id else "another action"
        detail: dict[str, Any] = {"path": "", "message": f"locked by {holder}"}
        if action_id:
            # The fact a client waits on (`shoal delete --wait` does): the running action.
            detail["action_id"] = action_id
        super().__init__(
            f"cluster {cluster} is busy with {holder}; try again when it has finished",
            [detail],
        )
        self.cluster = cluster
        self.action_id = action_id


class OutOfBounds(Conflict):
    """A resize whose new size falls outside its node group's min..max (with `strict`): the
    numbers travel with it, so a face words the refusal its own way."""

    def __init__(
        self, message: str, details: Sequence[Problem], *, current: int, low: int, high: int | None
    ) -> None:
        super().__init__(message, details)
        self.current = current
        self.low = low
        self.high = high


class NotReleasable(Conflict):
    """A node that cannot leave its node group and stay (a unit of several members, or the
    group at its min)."""

    code = "not_releasable"


class Unplaceable(ServiceError):
    kind = ErrorKind.CONFLICT
    code = "unplaceable"
    title = "Cannot be placed"


class Undecided(Unplaceable):
    """The exact placement method ran out of time: neither placed nor proven impossible."""

    code = "undecided"
    title = "Placement undecided in time"


def placement_refusal(undecided: bool) -> type[Unplaceable]:
    """The refusal for a placement that did not succeed: proven infeasible, or undecided."""
    return Undecided if undecided else Unplaceable


class Forbidden(ServiceError):
    kind = ErrorKind.FORBIDDEN
    code = "forbidden"
    title = "Forbidden"


class Unauthorized(ServiceError):
    kind = ErrorKind.UNAUTHORIZED
    code = "unauthorized"
    title = "Unauthorized"

    def __init__(
        self,
        message: str,
        details: Sequence[Problem | Mapping[str, Any]] | None = None,
        *,
        challenge: str | None = None,
    ) -> None:
        super().__init__(message, details)
        self.challenge = challenge
        """The WWW-Authenticate value; None: the API's default."""


class _TryLater(ServiceError):
    """A refusal that says when to ask again (`Retry-After`, set at the API edge)."""

    def __init__(
        self,
        message: str,
        details: Sequence[Problem | Mapping[str, Any]] | None = None,
        *,
        retry_after_s: int = 5,
    ) -> None:
        super().__init__(message, details)
        self.retry_after_s = retry_after_s


class Unavailable(_TryLater):
    """Something the service depends on (Keystone) is slow or down: not the caller's fault."""

    kind = ErrorKind.UNAVAILABLE
    code = "unavailable"
    title = "Service unavailable"


class TooMany(_TryLater):
    """The caller already holds its share of something bounded (its details name the limit)."""

    kind = ErrorKind.TOO_MANY
    code = "too_many_requests"
    title = "Too many requests"

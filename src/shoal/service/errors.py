"""Refusals, each with the HTTP status and the error code it maps to."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    status = 400
    code = "bad_request"
    title = "Bad request"

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []

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
    status = 422
    code = "invalid_document"
    title = "Invalid input"


class NotFound(ServiceError):
    status = 404
    code = "not_found"
    title = "Not found"


class Conflict(ServiceError):
    status = 409
    code = "conflict"
    title = "Conflict"


class Unplaceable(ServiceError):
    status = 409
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
    status = 403
    code = "forbidden"
    title = "Forbidden"


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"
    title = "Unauthorized"

    def __init__(
        self,
        message: str,
        details: list[dict[str, Any]] | None = None,
        *,
        challenge: str | None = None,
    ) -> None:
        super().__init__(message, details)
        self.challenge = challenge
        """The WWW-Authenticate value; None: the API's default."""

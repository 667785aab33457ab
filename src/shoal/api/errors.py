"""Exception handlers: every failure answers in Shoal's one error shape, never a traceback."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from shoal.model.problems import pointer
from shoal.service.errors import ErrorKind, ServiceError, Unauthorized

log = logging.getLogger("shoal.api")


class ErrorJSON(JSONResponse):
    """An error answer that can always be sent: a message quoting the request's text may hold
    what UTF-8 cannot encode (a lone surrogate); then every non-ASCII character is escaped."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode()


_TITLES = {
    400: ("bad_request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not_found", "Not found"),
    405: ("method_not_allowed", "Method not allowed"),
    408: ("request_timeout", "Request timeout"),
    409: ("conflict", "Conflict"),
    413: ("too_large", "Request body too large"),
    415: ("unsupported_media_type", "Unsupported media type"),
    422: ("invalid_request", "Invalid request"),
    429: ("too_many_requests", "Too many requests"),
    503: ("unavailable", "Service unavailable"),
}


HTTP_STATUS = {
    ErrorKind.BAD_REQUEST: 400,
    ErrorKind.INVALID: 422,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.CONFLICT: 409,
    ErrorKind.FORBIDDEN: 403,
    ErrorKind.UNAUTHORIZED: 401,
    ErrorKind.UNAVAILABLE: 503,
    ErrorKind.TOO_LARGE: 413,
    ErrorKind.TOO_MANY: 429,
}
"""The service's refusals by kind, as HTTP: the one place their status codes are chosen."""


def http_status(exc: ServiceError) -> int:
    return HTTP_STATUS[exc.kind]


def error_body(
    status: int, message: str, details: list[dict[str, Any]] | None = None, code: str | None = None
) -> dict[str, Any]:
    default_code, title = _TITLES.get(status, ("error", "Error"))
    return {
        "error": {
            "code": code or default_code,
            "title": title,
            "message": message,
            "details": details or [],
        }
    }


def error_response(
    status: int,
    message: str,
    details: list[dict[str, Any]] | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return ErrorJSON(
        error_body(status, message, details, code), status_code=status, headers=headers
    )


def install(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        headers = None
        if isinstance(exc, Unauthorized):
            headers = {"WWW-Authenticate": exc.challenge or "Bearer"}
        if exc.retry_after_s is not None:
            headers = {"Retry-After": str(exc.retry_after_s)}
        return ErrorJSON(exc.body(), status_code=http_status(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = []
        for e in exc.errors():
            loc = [p for p in e.get("loc", ()) if p not in ("body",)]
            where = loc[0] if loc and loc[0] in ("query", "path", "header") else None
            parts = loc[1:] if where else loc
            path = pointer(*parts)
            if where:
                path = f"{where}:{'.'.join(str(p) for p in parts)}"
            details.append({"path": path, "message": str(e.get("msg", "invalid"))})
        return error_response(422, f"the request has {len(details)} problem(s)", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(
            exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return error_response(500, f"internal error: {type(exc).__name__}", code="internal")

"""Heat's error body, on every error under /orchestration:

    {"explanation": "The resource could not be found.", "code": 404,
     "error": {"message": "...", "traceback": null, "type": "EntityNotFound"},
     "title": "Not Found"}

Shoal's refusals are mapped by their kind (an invalid document, 422 natively, is Heat's 400
`StackValidationFailed`); the façade's own refusals carry Heat's exception name.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from shoal.api.errors import http_status
from shoal.api.senlin.errors import senlin_body
from shoal.service.errors import ClusterBusy, ErrorKind, ServiceError, Unauthorized
from shoal.service.heat.errors import heat_type_of

log = logging.getLogger("shoal.api.heat")

_TYPES = {
    ErrorKind.BAD_REQUEST: "HTTPBadRequest",
    ErrorKind.INVALID: "StackValidationFailed",
    ErrorKind.NOT_FOUND: "EntityNotFound",
    ErrorKind.CONFLICT: "HTTPConflict",
    ErrorKind.FORBIDDEN: "Forbidden",
    ErrorKind.UNAUTHORIZED: "HTTPUnauthorized",
    ErrorKind.UNAVAILABLE: "HTTPServiceUnavailable",
    ErrorKind.TOO_LARGE: "RequestLimitExceeded",
    ErrorKind.TOO_MANY: "HTTPTooManyRequests",
}


class Redirect(Exception):
    """Heat's name lookup: `/stacks/{name}[/...]` answers 302 to `/stacks/{name}/{id}[/...]`."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


def heat_body(status: int, message: str, kind: str) -> dict[str, Any]:
    shaped = senlin_body(status, message, kind)  # webob's titles and explanations, as Heat's
    return {
        "explanation": shaped["explanation"],
        "code": status,
        "error": {"message": message, "traceback": None, "type": kind},
        "title": shaped["title"],
    }


def heat_error(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(heat_body(status, message, kind), status_code=status, headers=headers)


def _message(exc: ServiceError) -> str:
    said = [
        f"{d.get('path')}: {d.get('message')}" if d.get("path") else str(d.get("message"))
        for d in exc.details
        if d.get("message") and str(d.get("message")) not in exc.message
    ]
    return exc.message if not said else f"{exc.message}: " + "; ".join(said)


def install(app: FastAPI) -> None:
    @app.exception_handler(Redirect)
    async def _redirect(_: Request, exc: Redirect) -> Response:
        return Response(status_code=302, headers={"Location": exc.location})

    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        status = 400 if exc.kind is ErrorKind.INVALID else http_status(exc)
        kind = heat_type_of(exc) or _TYPES.get(exc.kind, "HTTPBadRequest")
        if isinstance(exc, ClusterBusy):
            kind = "ActionInProgress"
        headers = None
        if isinstance(exc, Unauthorized):
            headers = {"WWW-Authenticate": exc.challenge or "Keystone uri=''"}
        if exc.retry_after_s is not None:
            headers = {"Retry-After": str(exc.retry_after_s)}
        return heat_error(status, _message(exc), kind, headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        said = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            said.append(f"{where}: {e.get('msg', 'invalid')}" if where else str(e.get("msg")))
        return heat_error(400, "; ".join(said) or "invalid request", "HTTPBadRequest")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        message = str(exc.detail) if exc.detail else "error"
        title = senlin_body(status, "", "")["title"]
        return heat_error(
            status, message, "HTTP" + title.replace(" ", ""), getattr(exc, "headers", None)
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error in the orchestration façade")
        return heat_error(500, f"internal error: {type(exc).__name__}", "InternalError")

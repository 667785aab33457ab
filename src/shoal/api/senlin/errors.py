"""Senlin's error body, on every error under /clustering:

    {"code": 404, "title": "Not Found", "explanation": "The resource could not be found.",
     "error": {"code": 404, "message": "...", "type": "ResourceNotFound"}}

Shoal's refusals are mapped by their kind, as Shoal's own API maps them (`api.errors.
http_status`), except that an invalid request (422 natively) is Senlin's 400; their details
(JSON pointers) are folded into the message. Senlin's `type` is chosen by the refusal's code,
and a busy cluster (`ClusterBusy`, whichever check found it) is recognised by its type, never
by its text.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from shoal.api.errors import http_status
from shoal.service.errors import ClusterBusy, ErrorKind, ServiceError, Unauthorized

log = logging.getLogger("shoal.api.senlin")

# webob's titles and explanations, which Senlin's fault middleware passed on.
_STATUS: dict[int, tuple[str, str]] = {
    400: (
        "Bad Request",
        "The server could not comply with the request since it is either malformed or "
        "otherwise incorrect.",
    ),
    401: (
        "Unauthorized",
        "This server could not verify that you are authorized to access the document you "
        "requested.",
    ),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method is not allowed for this resource."),
    406: (
        "Not Acceptable",
        "The resource could not be generated that was acceptable to your browser.",
    ),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: ("Request Entity Too Large", "The body of your request was too large for this server."),
    415: ("Unsupported Media Type", "The request media type is not supported by this server."),
    429: ("Too Many Requests", "Too many requests have been made by this client."),
    500: (
        "Internal Server Error",
        "The server has either erred or is incapable of performing the requested operation.",
    ),
    503: (
        "Service Unavailable",
        "The server is currently unavailable. Please try again at a later time.",
    ),
}

# Shoal's error codes -> Senlin's exception names (the `type` clients may look at).
_TYPES = {
    "bad_request": "BadRequest",
    "invalid_document": "BadRequest",
    "invalid_spec": "InvalidSpec",
    "not_found": "ResourceNotFound",
    "conflict": "ActionConflict",
    "unplaceable": "ActionConflict",
    "undecided": "ActionConflict",
    "cooldown": "ActionCooldown",
    "resource_in_use": "ResourceInUse",
    "node_not_orphan": "NodeNotOrphan",
    "cluster_locked": "ActionInProgress",
    "feature_not_supported": "FeatureNotSupported",
    "not_releasable": "FeatureNotSupported",
    "forbidden": "Forbidden",
    "unauthorized": "HTTPUnauthorized",
}


def senlin_body(status: int, message: str, kind: str) -> dict[str, Any]:
    title, explanation = _STATUS.get(status, ("Error", "The request failed."))
    return {
        "code": status,
        "title": title,
        "explanation": explanation,
        "error": {"code": status, "message": message, "type": kind},
    }


def senlin_error(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(senlin_body(status, message, kind), status_code=status, headers=headers)


def _with_details(message: str, details: list[dict[str, Any]]) -> str:
    said = [
        f"{d.get('path')}: {d.get('message')}" if d.get("path") else str(d.get("message"))
        for d in details
        if d.get("message") and str(d.get("message")) not in message
    ]
    return message if not said else f"{message}: " + "; ".join(said)


def _http_type(status: int) -> str:
    title = _STATUS.get(status, ("Error", ""))[0]
    return "HTTP" + title.replace(" ", "")


def install(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        status = 400 if exc.kind is ErrorKind.INVALID else http_status(exc)
        kind = _TYPES.get(exc.code, "BadRequest" if status == 400 else _http_type(status))
        if isinstance(exc, ClusterBusy):
            kind = "ActionInProgress"
        headers = None
        if isinstance(exc, Unauthorized):
            headers = {"WWW-Authenticate": exc.challenge or "Keystone uri=''"}
        if exc.retry_after_s is not None:
            headers = {"Retry-After": str(exc.retry_after_s)}
        return senlin_error(status, _with_details(exc.message, exc.details), kind, headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        said = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            said.append(f"{where}: {e.get('msg', 'invalid')}" if where else str(e.get("msg")))
        return senlin_error(400, "; ".join(said) or "invalid request", "BadRequest")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        message = str(exc.detail) if exc.detail else _STATUS.get(status, ("Error", ""))[0]
        return senlin_error(
            status, message, _http_type(status), headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error in the clustering façade")
        return senlin_error(500, f"internal error: {type(exc).__name__}", "InternalError")

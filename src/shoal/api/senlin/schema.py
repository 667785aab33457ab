"""What the façade's OpenAPI document declares beyond its routes: Senlin's error body.

The façade serves `/clustering/openapi.json` so the fuzzer (issue 9) can drive it like the
native API: every route declares the error statuses it may answer, each with Senlin's error
body (`{"code", "title", "explanation", "error": {"code", "message", "type"}}`), so an answer
the document does not describe is a finding. Senlin clients never read this document.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class SenlinErrorInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: int
    message: str
    type: str


class SenlinErrorBody(BaseModel):
    """Every error the façade answers, in Senlin's shape."""

    model_config = ConfigDict(extra="allow")

    code: int
    title: str
    explanation: str
    error: SenlinErrorInfo


def _error(description: str) -> dict[str, Any]:
    return {"model": SenlinErrorBody, "description": description}


ERRORS: dict[int | str, dict[str, Any]] = {
    400: _error("Bad request, in Senlin's words"),
    401: _error("No valid token"),
    403: _error("Not allowed for this token"),
    404: _error("No such object for this project"),
    405: _error("Method not allowed on this path"),
    406: _error("A microversion this façade does not speak"),
    409: _error("Conflict: a busy cluster, an object in use, a feature not supported"),
    413: _error("Request body too large"),
    415: _error("Not a JSON body"),
}
"""The error statuses of every façade route, declared once for all its routers."""

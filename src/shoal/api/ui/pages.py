"""The dashboard's page and its static assets, with a policy that forbids any outside request.

Every asset is read from the installed package (`shoal/api/ui/static`), so `shoal server`
serves the whole UI with nothing else installed. The Content-Security-Policy lets the page load
and call only its own origin: no CDN, no web font, no analytics can sneak in later.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

from shoal.service.errors import NotFound

router = APIRouter(prefix="/ui")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Assets change with the package; a short cache keeps an upgrade visible.
    "Cache-Control": "no-cache",
}


def _asset(name: str) -> Response:
    suffix = name[name.rfind(".") :] if "." in name else ""
    kind = _TYPES.get(suffix)
    if kind is None or "/" in name or name.startswith("."):
        raise NotFound(f"no UI asset {name!r}")
    path = resources.files("shoal.api.ui").joinpath("static", name)
    if not path.is_file():
        raise NotFound(f"no UI asset {name!r}")
    return Response(path.read_bytes(), media_type=kind, headers=_HEADERS)


@router.get("")
async def index() -> Response:
    return _asset("index.html")


@router.get("/")
async def index_slash() -> RedirectResponse:
    return RedirectResponse("/ui", status_code=308)


@router.get("/static/{name}")
async def asset(name: str) -> Response:
    return _asset(name)

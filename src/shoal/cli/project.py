"""`shoal project create NAME` (admin): a new tenant and its token, shown once.

`shoal project quota show|set`: a project's quotas (limits per resource, what is in use).

`shoal project token create|list|revoke`: more tokens for a project, which of them still work,
and revoking one (it answers 401 from then on). `--expires` takes a duration (`90d`, `12h`,
`30m`, `3600s`) or `never`; without it the server's `token_ttl_s` applies.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_INVALID, EXIT_OK, CliError
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.tables import table, text, when

app = typer.Typer(help="Projects (tenants): admin only.", no_args_is_help=True)
token_app = typer.Typer(help="A project's tokens: issue, list, revoke.", no_args_is_help=True)
app.add_typer(token_app, name="token")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d{1,9})([smhd]?)$")

ExpiresOption = Annotated[
    str | None,
    typer.Option(
        "--expires", help="Token lifetime: 90d, 12h, 30m, 3600s or never; default: the server's."
    ),
]


def expires_in_s(value: str | None) -> int | None:
    """`--expires` as the API's `expires_in_s` (0: never; None: the server's default)."""
    if value is None:
        return None
    if value.strip().lower() == "never":
        return 0
    m = _DURATION.match(value.strip().lower())
    if m is None or int(m.group(1)) == 0:
        raise CliError(
            f"--expires {value!r}: give a duration like 90d, 12h, 30m, 3600s, or never",
            EXIT_INVALID,
        )
    return int(m.group(1)) * _UNITS[m.group(2) or "s"]


def _with_expiry(body: dict[str, Any], expires: str | None) -> dict[str, Any]:
    seconds = expires_in_s(expires)
    return body if seconds is None else {**body, "expires_in_s": seconds}


def _expiry(info: dict[str, Any]) -> str:
    return when(info.get("expires_at")) or "never"


@app.command("create")
@remote()
async def create(
    s: Session,
    name: Annotated[str, typer.Argument(help="Project name.")],
    expires: ExpiresOption = None,
) -> int:
    """Create a project and print its token (it is not shown again)."""
    body = _with_expiry({"name": name}, expires)
    found = await s.client.call("POST", "/v1/projects", json=body)
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    p = found.get("project", {})
    out = screen.out()
    out.print(f"project {text(p.get('name'))} created, id {text(p.get('id'))}")
    info = found.get("token_info", {})
    out.print(f"its token {text(info.get('id'))}, expires {text(_expiry(info))}")
    out.print("(shown once; give it as --token or SHOAL_TOKEN):")
    print(found.get("token"), flush=True)
    return EXIT_OK


@token_app.command("create")
@remote()
async def token_create(
    s: Session,
    project: Annotated[str, typer.Argument(help="Project name or id.")],
    name: Annotated[str, typer.Option("--name", help="What the token is for.")] = "",
    expires: ExpiresOption = None,
) -> int:
    """Issue another token for a project (admin) and print it (it is not shown again)."""
    body = _with_expiry({"name": name}, expires)
    found = await s.client.call("POST", f"/v1/projects/{seg(project)}/tokens", json=body)
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    info = found.get("token_info", {})
    screen.out().print(
        f"token {text(info.get('id'))} for project {text(info.get('project'))}, "
        f"expires {text(_expiry(info))} (shown once):"
    )
    print(found.get("token"), flush=True)
    return EXIT_OK


@token_app.command("list")
@remote()
async def token_list(
    s: Session, project: Annotated[str, typer.Argument(help="Project name or id.")]
) -> int:
    """A project's tokens (never their secrets): which work, which expired or were revoked."""
    found = await s.client.call("GET", f"/v1/projects/{seg(project)}/tokens")
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    t = table(None, ["ID", "NAME", "STATUS", "CREATED", "EXPIRES", "REVOKED"])
    for info in found.get("tokens", []):
        t.add_row(
            text(info.get("id")),
            text(info.get("name")),
            text(info.get("status")),
            when(info.get("created_at")),
            _expiry(info),
            when(info.get("revoked_at")),
        )
    screen.out().print(t)
    return EXIT_OK


@token_app.command("revoke")
@remote()
async def token_revoke(
    s: Session,
    token_id: Annotated[str, typer.Argument(help="The token's id (from create or list).")],
) -> int:
    """Revoke a token: every request with it answers 401 from now on."""
    found = await s.client.call("DELETE", f"/v1/tokens/{seg(token_id)}")
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    info = found.get("token_info", {})
    screen.out().print(
        f"token {text(info.get('id'))} revoked at {text(when(info.get('revoked_at')))}"
    )
    return EXIT_OK


quota_app = typer.Typer(
    help="A project's quotas: limits per resource and what is in use.", no_args_is_help=True
)
app.add_typer(quota_app, name="quota")


def _show_quotas(found: dict[str, Any], output: OutputFormat) -> None:
    if output is not OutputFormat.TABLE:
        emit_data(found, output)
        return
    from rich.table import Table

    t = Table(title=f"quotas of project {text(found.get('project'))}")
    for column in ("resource", "limit", "in use", "source"):
        t.add_column(column)
    for resource, q in found.get("quotas", {}).items():
        limit = q.get("limit")
        t.add_row(
            text(resource),
            "unlimited" if limit == -1 else text(limit),
            text(q.get("in_use")),
            "default" if q.get("default") else "project",
        )
    screen.out().print(t)


@quota_app.command("show")
@remote()
async def quota_show(
    s: Session, project: Annotated[str, typer.Argument(help="Project name or id.")]
) -> int:
    """Show a project's quotas (its own token, or an admin's)."""
    found = await s.client.call("GET", f"/v1/projects/{seg(project)}/quotas")
    _show_quotas(found, s.output)
    return EXIT_OK


@quota_app.command("set")
@remote()
async def quota_set(
    s: Session,
    project: Annotated[str, typer.Argument(help="Project name or id.")],
    limits: Annotated[
        list[str],
        typer.Argument(
            help="RESOURCE=LIMIT pairs: clusters, nodes, vcpus, ram_mb, volume_gb; -1 is unlimited."
        ),
    ],
) -> int:
    """Set a project's quotas (admin)."""
    values: dict[str, int] = {}
    for item in limits:
        resource, sep, number = item.partition("=")
        if not sep or not number.lstrip("-").isdigit() or len(number) > 12:
            raise CliError(f"{item!r}: give RESOURCE=LIMIT, e.g. nodes=100", EXIT_INVALID)
        values[resource] = int(number)
    found = await s.client.call(
        "PUT", f"/v1/projects/{seg(project)}/quotas", json={"quotas": values}
    )
    _show_quotas(found, s.output)
    return EXIT_OK

"""`shoal host list|fail|recover` (admin): the provider's hosts, and losing one on purpose.

Failing a host is a drill for self-healing: on `local` its node processes are killed, on `sim`
its resources read MISSING, and it leaves the inventory, so Shoal's manager replaces its nodes
on other hosts. Recovering it brings it back into the inventory. A refusal (not an admin, an
unknown host, a provider whose hosts cannot be failed) exits 2 with the error's details.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.client import connect, seg
from shoal.cli.errors import EXIT_OK
from shoal.cli.options import OutputOption, TokenOption, UrlOption, target
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.runner import run
from shoal.cli.tables import table, text

app = typer.Typer(help="The provider's hosts (admin): list, fail, recover.", no_args_is_help=True)

HostArg = Annotated[str, typer.Argument(help="Host name, as `shoal host list` shows it.")]


@app.command("list")
def list_hosts(
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """List the provider's hosts: zone, failed or not, resources on each."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            hosts: list[dict[str, Any]] = (await client.get("/v1/hosts"))["hosts"]
        if output is not OutputFormat.TABLE:
            emit_data({"hosts": hosts}, output)
            return EXIT_OK
        t = table(None, ("name", "zone", "failed", "resources"))
        for h in hosts:
            failed = "[red]yes[/]" if h.get("failed") else "no"
            t.add_row(text(h.get("name")), text(h.get("zone")), failed, text(h.get("resources")))
        screen.out().print(t)
        return EXIT_OK

    run(body)


@app.command("fail")
def fail(
    host: HostArg,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Lose a host on purpose: its servers die and Shoal moves its nodes elsewhere."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found: dict[str, Any] = await client.call("POST", f"/v1/hosts/{seg(host)}/fail")
        if output is not OutputFormat.TABLE:
            emit_data(found, output)
            return EXIT_OK
        lost = found.get("resources") or []
        screen.out().print(
            f"host {text(host)} failed; {len(lost)} resource(s) on it lost"
            + (f": {text(lost)}" if lost else "")
        )
        return EXIT_OK

    run(body)


@app.command("recover")
def recover(
    host: HostArg,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Bring a failed host back into the inventory."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            found: dict[str, Any] = await client.call("POST", f"/v1/hosts/{seg(host)}/recover")
        if output is not OutputFormat.TABLE:
            emit_data(found, output)
            return EXIT_OK
        screen.out().print(f"host {text(host)} recovered")
        return EXIT_OK

    run(body)

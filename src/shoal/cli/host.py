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
from shoal.cli.client import ShoalClient, connect, seg
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
    """List the provider's hosts: zone, failed or not, resources on each, Shoal's nodes on each."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
            hosts: list[dict[str, Any]] = (await client.get("/v1/hosts"))["hosts"]
            nodes: list[dict[str, Any]] = (await client.get("/v1/nodes"))["nodes"]
        placed: dict[str, list[str]] = {}
        for n in nodes:
            if n.get("host"):
                placed.setdefault(str(n["host"]), []).append(str(n.get("name")))
        if output is not OutputFormat.TABLE:
            for h in hosts:
                h["nodes"] = sorted(placed.get(str(h.get("name")), []))
            emit_data({"hosts": hosts}, output)
            return EXIT_OK
        t = table(None, ("name", "zone", "failed", "resources", "nodes"))
        for h in hosts:
            failed = "[red]yes[/]" if h.get("failed") else "no"
            on_it = sorted(placed.get(str(h.get("name")), []))
            t.add_row(
                text(h.get("name")),
                text(h.get("zone")),
                failed,
                text(h.get("resources")),
                text(on_it),
            )
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
            lost = [str(r) for r in found.get("resources") or []]
            named = await _node_names(client, lost) if lost else {}
        if output is not OutputFormat.TABLE:
            emit_data({**found, "nodes": [named[r] for r in lost if r in named]}, output)
            return EXIT_OK
        shown = [named.get(r, r) for r in lost]
        screen.out().print(
            f"host {text(host)} failed; {len(lost)} resource(s) on it lost"
            + (f": {text(shown)}" if shown else "")
        )
        if named and client.embedded:
            screen.out().print("the background Shoal replaces them on other hosts")
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


async def _node_names(client: ShoalClient, resources: list[str]) -> dict[str, str]:
    """Provider ids -> `cluster/node` names, for the nodes Shoal knows among `resources`."""
    wanted = set(resources)
    nodes: list[dict[str, Any]] = (await client.get("/v1/nodes"))["nodes"]
    clusters = {c["id"]: c["name"] for c in (await client.get("/v1/clusters"))["clusters"]}
    return {
        str(n["physical_id"]): f"{clusters.get(n.get('cluster_id'), '?')}/{n['name']}"
        for n in nodes
        if n.get("physical_id") in wanted
    }

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
from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_OK
from shoal.cli.output import emit_data
from shoal.cli.pages import all_nodes
from shoal.cli.tables import table, text

app = typer.Typer(help="The provider's hosts (admin): list, fail, recover.", no_args_is_help=True)

USE_COLUMNS = (("vcpus", ""), ("ram_mb", "G"), ("disk_gb", "G"))
"""What `host list` shows of each host's capacity, and the unit it shows it in."""

HostArg = Annotated[str, typer.Argument(help="Host name, as `shoal host list` shows it.")]


@app.command("list")
@remote()
async def list_hosts(s: Session) -> int:
    """List the provider's hosts: zone, failed or not, resources, capacity used/free, nodes."""
    hosts: list[dict[str, Any]] = (await s.client.get("/v1/hosts"))["hosts"]
    from shoal.model.names import natural_key

    nodes: list[dict[str, Any]] = await all_nodes(s.client)
    placed: dict[str, list[str]] = {}
    for n in nodes:
        if n.get("host"):
            placed.setdefault(str(n["host"]), []).append(str(n.get("name")))
    for names in placed.values():
        names.sort(key=natural_key)
    if not s.table:
        for h in hosts:
            h["nodes"] = placed.get(str(h.get("name")), [])
        emit_data({"hosts": hosts}, s.output)
        return EXIT_OK
    t = table(
        None,
        (
            "name",
            "zone",
            "failed",
            "resources",
            "vcpus used/free",
            "ram used/free",
            "disk used/free",
            "nodes",
        ),
    )
    for h in hosts:
        failed = "[red]yes[/]" if h.get("failed") else "no"
        on_it = placed.get(str(h.get("name")), [])
        t.add_row(
            text(h.get("name")),
            text(h.get("zone")),
            failed,
            text(h.get("resources")),
            *(use(h, key, unit) for key, unit in USE_COLUMNS),
            text(on_it),
        )
    screen.out().print(t)
    return EXIT_OK


@app.command("fail")
@remote()
async def fail(s: Session, host: HostArg) -> int:
    """Lose a host on purpose: its servers die and Shoal moves its nodes elsewhere."""
    found: dict[str, Any] = await s.client.call("POST", f"/v1/hosts/{seg(host)}/fail")
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    lost = list(found.get("resources") or [])
    # Named by the server as they were when the host failed (issue 36: never provider ids).
    named = [str(n) for n in found.get("nodes") or []]
    line = f"host {text(host)} failed; {len(lost)} resource(s) on it lost"
    if named:
        line += f": {text(named)}"
    if len(lost) > len(named):
        line += f" ({len(lost) - len(named)} not a node of Shoal's)"
    screen.out().print(line)
    if named and s.client.embedded:
        screen.out().print("the background Shoal replaces them on other hosts")
    return EXIT_OK


@app.command("recover")
@remote()
async def recover(s: Session, host: HostArg) -> int:
    """Bring a failed host back into the inventory."""
    found: dict[str, Any] = await s.client.call("POST", f"/v1/hosts/{seg(host)}/recover")
    if not s.table:
        emit_data(found, s.output)
        return EXIT_OK
    screen.out().print(f"host {text(host)} recovered")
    return EXIT_OK


def use(host: dict[str, Any], key: str, unit: str) -> str:
    """`used/free` of one resource of `host` (RAM in GB); `-` where the API does not say."""
    size, held = (host.get("capacity") or {}).get(key), (host.get("used") or {}).get(key)
    if held is None:
        return "-"
    scale = 1024 if key == "ram_mb" else 1
    free = "-" if size is None else _amount((size - held) / scale)
    return f"{_amount(held / scale)}/{free}{unit}"


def _amount(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"

"""`shoal receiver create|list|delete` and `shoal webhook trigger URL`: scaling webhooks.

A receiver's URL holds its secret and is shown once, by `create`. `webhook trigger` POSTs to
such a URL the way a monitoring system would, with no bearer token: an absolute URL goes to
its own server; a relative one to --url, or to the home's background Shoal. A bearer token goes
only to the server --url names, never to another host a URL points at.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qsl, urlsplit

import typer

from shoal.cli import background, screen
from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_OK
from shoal.cli.options import TimeoutOption
from shoal.cli.output import emit_data
from shoal.cli.pages import every
from shoal.cli.submit import submit
from shoal.cli.tables import table, text, when
from shoal.cli.where import where as find_where

app = typer.Typer(help="Webhooks that scale or recover a cluster.", no_args_is_help=True)
webhook_app = typer.Typer(help="Call a receiver's webhook.", no_args_is_help=True)

NameArg = Annotated[str, typer.Argument(help="Receiver name (or id).")]


@app.command("create")
@remote()
async def create(
    s: Session,
    name: NameArg,
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="The cluster (name or id).")],
    action: Annotated[str, typer.Option("--action", "-a", help="scale_out, scale_in or recover.")],
    nodegroup: Annotated[
        str | None,
        typer.Option("--nodegroup", "-g", help="Node group; optional if the cluster has one."),
    ] = None,
    workload: Annotated[
        str | None,
        typer.Option("--workload", "-w", help="Scale this workload's replicas instead."),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", "-n", min=1, help="Nodes per trigger (overrides).")
    ] = None,
    adjustment_type: Annotated[
        str | None,
        typer.Option(
            "--adjustment-type",
            help="EXACT_CAPACITY, CHANGE_IN_CAPACITY or CHANGE_IN_PERCENTAGE (overrides).",
        ),
    ] = None,
    number: Annotated[
        float | None, typer.Option("--number", help="The adjustment's number (overrides).")
    ] = None,
) -> int:
    """Create a receiver and print its webhook URL (it is not shown again)."""
    params = {
        k: v
        for k, v in (("count", count), ("adjustment_type", adjustment_type), ("number", number))
        if v is not None
    }
    body: dict[str, Any] = {"name": name, "cluster": cluster, "action": action}
    if nodegroup is not None:
        body["nodegroup"] = nodegroup
    if workload is not None:
        body["workload"] = workload
    if params:
        body["params"] = params
    found = await s.client.call("POST", "/v1/receivers", json=body)
    r = found["receiver"]
    hook = s.client.http.base_url + r["webhook_url"]
    if not s.table:
        emit_data({"receiver": dict(r, webhook_url=hook)}, s.output)
        return EXIT_OK
    screen.err().print(
        f"receiver {text(r['name'])} created: {text(r['action'])} "
        f"{_target(r)} of cluster {text(cluster)}; its webhook URL "
        "(shown once; `shoal webhook trigger URL` calls it):"
    )
    print(hook, flush=True)
    return EXIT_OK


def _target(r: dict[str, Any]) -> str:
    """What a receiver scales: its node group, or `workload W`."""
    if r.get("workload"):
        return f"workload {r['workload']}"
    return str(r.get("nodegroup") or "")


@app.command("list")
@remote()
async def list_receivers(s: Session) -> int:
    """List receivers (their secrets are never shown again)."""
    found = await every(s.client, "/v1/receivers", "receivers")
    if not s.table:
        emit_data({"receivers": found}, s.output)
        return EXIT_OK
    t = table(None, ("name", "action", "target", "params", "triggered", "cluster", "id"))
    for r in found:
        t.add_row(
            text(r.get("name")),
            text(r.get("action")),
            text(_target(r)),
            text(r.get("params")),
            when(r.get("triggered_at")),
            text(r.get("cluster_id")),
            text(r.get("id")),
        )
    screen.out().print(t)
    return EXIT_OK


@app.command("delete")
@remote(output=False)
async def delete(s: Session, name: NameArg) -> int:
    """Delete a receiver; its webhook URL stops working."""
    await s.client.call("DELETE", f"/v1/receivers/{seg(name)}")
    screen.out().print(f"receiver {text(name)} deleted")
    return EXIT_OK


@webhook_app.command("trigger")
@remote()
async def trigger(
    s: Session,
    webhook: Annotated[str, typer.Argument(help="The webhook URL `receiver create` printed.")],
    wait: Annotated[
        bool | None,
        typer.Option(
            "--wait/--no-wait",
            help="Wait for the action to end (needs a token). "
            "Default: unless --url names a server.",
        ),
    ] = None,
    timeout: TimeoutOption = None,
) -> int:
    """Trigger a receiver: POST to its webhook URL."""
    from shoal.cli.client import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, ShoalClient
    from shoal.cli.http import HttpClient

    parts = urlsplit(webhook)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None
    # The query goes as params, encoded once.
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if origin is not None and origin != _origin(s.target.url or _our_url()):
        # Another server than ours: never send it our bearer token.
        http = HttpClient(origin, read_timeout=READ_TIMEOUT_S, connect_timeout=CONNECT_TIMEOUT_S)
        client = ShoalClient(http, where=origin)
    else:
        client = s.client
    return await submit(
        client, "POST", parts.path, params=query, output=s.output, wait=wait, timeout=timeout
    )


def _our_url() -> str | None:
    """The server commands talk to without --url: SHOAL_URL, or the home's background Shoal."""
    found = find_where()
    if found.url:
        return found.url
    state = background.running(found.home)
    return state.url if state is not None else None


def _origin(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"

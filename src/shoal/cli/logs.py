"""`shoal logs NODE [--cluster C] [--bytes N]`: the end of a node's own log, from the API.

On the `local` provider each server process writes a log in its working directory; the server
serves its end (`GET /v1/nodes/{id}/log`), so this works against a remote Shoal too.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import EXIT_OK, CliError
from shoal.cli.pages import all_nodes


@remote(output=False)
async def logs(
    s: Session,
    node: Annotated[str, typer.Argument(help="Node name or id.")],
    cluster: Annotated[
        str | None,
        typer.Option("--cluster", "-c", help="The node's cluster, when names repeat."),
    ] = None,
    size: Annotated[
        int,
        typer.Option("--bytes", min=1, max=1024 * 1024, help="How much of the log's end."),
    ] = 64 * 1024,
    deployment: Annotated[
        str | None,
        typer.Option("--deployment", "-d", help="A software deployment's stdout and stderr."),
    ] = None,
) -> int:
    """Print the end of a node's log (local provider), or a deployment's output on it."""
    nodes: list[dict[str, Any]] = await all_nodes(s.client, cluster)
    found = [n for n in nodes if node in (n.get("name"), n.get("id"))]
    if not found:
        where = f" in cluster {cluster}" if cluster else ""
        raise CliError(f"no node {node}{where}")
    if len(found) > 1:
        raise CliError(f"{len(found)} nodes are named {node}; say which with --cluster")
    if deployment is not None:
        from shoal.cli.deployments import deployment_log

        return await deployment_log(s.client, str(found[0]["id"]), deployment)
    text = await s.client.get(f"/v1/nodes/{seg(str(found[0]['id']))}/log", bytes=size)
    sys.stdout.write(str(text or ""))
    sys.stdout.flush()
    return EXIT_OK

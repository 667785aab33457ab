"""`shoal recover CLUSTER [--node NAME ...] [--how ...]`: repair nodes by hand, and wait.

Without `--node`, every node in ERROR or unhealthy is recovered the way its health policy says;
named nodes are recreated in place unless `--how` says otherwise. Like the other changes, it
waits for its CLUSTER_RECOVER action: exit 0 when it succeeded and the cluster is ACTIVE, 1 if
not, 2 when refused (no such node, nothing to recover, the cluster busy).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from shoal.cli.command import Session, remote, seg
from shoal.cli.options import TimeoutOption, WaitOption
from shoal.cli.submit import submit


class How(StrEnum):
    RECREATE = "recreate"
    REBOOT = "reboot"
    REBUILD = "rebuild"
    REPLACE = "replace"


@remote()
async def recover(
    s: Session,
    cluster: Annotated[str, typer.Argument(help="Cluster name or id.")],
    node: Annotated[
        list[str] | None,
        typer.Option(
            "--node",
            "-n",
            help="A node to recover (name or id); repeat for more. Default: every node in "
            "ERROR or unhealthy.",
        ),
    ] = None,
    how: Annotated[
        How | None,
        typer.Option(
            "--how",
            help="recreate (in place), reboot, rebuild (in place, from the profile) or replace "
            "(placed again elsewhere). Default: recreate for named nodes, the health policy's "
            "recovery for the rest.",
        ),
    ] = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
) -> int:
    """Recover a cluster's nodes (a CLUSTER_RECOVER action) and wait for it."""
    spec: dict[str, Any] = {}
    if node:
        spec["nodes"] = list(node)
    if how is not None:
        spec["how"] = str(how)
    return await submit(
        s.client,
        "POST",
        f"/v1/clusters/{seg(cluster)}/actions",
        json={"recover": spec},
        output=s.output,
        wait=wait,
        timeout=timeout,
    )

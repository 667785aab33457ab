"""`shoal up`, `apply`, `delete` and `scale`: cluster changes that wait for their action."""

from __future__ import annotations

from typing import Annotated

import typer

from shoal.cli.client import connect, seg
from shoal.cli.documents import document_name, read_document
from shoal.cli.errors import ApiError
from shoal.cli.options import (
    OutputOption,
    TimeoutOption,
    TokenOption,
    UrlOption,
    WaitOption,
    target,
)
from shoal.cli.output import OutputFormat
from shoal.cli.runner import run
from shoal.cli.submit import Goal, submit

DocumentArg = Annotated[
    str, typer.Argument(help="Cluster document (native YAML/JSON or vcluster JSON), or -.")
]
ClusterArg = Annotated[str, typer.Argument(help="Cluster name or id.")]


def up(
    document: DocumentArg,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Create a cluster from a document and wait until it is ACTIVE (exit 0) or not (exit 1)."""

    async def body() -> int:
        content, kind = read_document(document)
        async with connect(target(url, token), engine=True) as client:
            return await submit(
                client,
                "POST",
                "/v1/clusters",
                content=content,
                headers={"Content-Type": kind},
                output=output,
                wait=wait,
                timeout=timeout,
                fresh=True,
            )

    run(body)


def apply(
    document: DocumentArg,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Create the document's cluster, or change the existing one to match the document."""

    async def body() -> int:
        content, kind = read_document(document)
        name = document_name(content)
        async with connect(target(url, token), engine=True) as client:
            path = "/v1/clusters"
            if name is not None:
                try:
                    await client.get(f"/v1/clusters/{seg(name)}")
                    path = f"/v1/clusters/{seg(name)}"
                except ApiError as e:
                    if e.status != 404:
                        raise
            exists = path != "/v1/clusters"
            return await submit(
                client,
                "PUT" if exists else "POST",
                path,
                content=content,
                headers={"Content-Type": kind},
                output=output,
                wait=wait,
                timeout=timeout,
                fresh=not exists,
            )

    run(body)


def delete(
    cluster: ClusterArg,
    wait: Annotated[
        bool | None,
        typer.Option(
            "--wait/--no-wait",
            help="Return when the cluster is deleted. Default: wait only when embedded.",
        ),
    ] = None,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Delete a cluster and all its nodes."""

    async def body() -> int:
        async with connect(target(url, token), engine=True) as client:
            return await submit(
                client,
                "DELETE",
                f"/v1/clusters/{seg(cluster)}",
                output=output,
                wait=wait,
                timeout=timeout,
                goal=Goal.DELETED,
            )

    run(body)


def scale(
    cluster: ClusterArg,
    count: Annotated[int, typer.Option("--count", "-n", min=0, help="The exact node count.")],
    nodegroup: Annotated[
        str | None,
        typer.Option("--nodegroup", "-g", help="Node group; optional if the cluster has one."),
    ] = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Resize a node group to exactly COUNT replicas."""
    resize: dict[str, object] = {"adjustment_type": "EXACT_CAPACITY", "number": count}
    if nodegroup is not None:
        resize["nodegroup"] = nodegroup

    async def body() -> int:
        async with connect(target(url, token), engine=True) as client:
            return await submit(
                client,
                "POST",
                f"/v1/clusters/{seg(cluster)}/actions",
                json={"resize": resize},
                output=output,
                wait=wait,
                timeout=timeout,
            )

    run(body)

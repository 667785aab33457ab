"""`shoal up`, `apply`, `delete` and `scale`: cluster changes that wait for their action.

`apply --dry-run` changes nothing: it shows what applying the document to its existing cluster
would do (see preview.py).
"""

from __future__ import annotations

from typing import Annotated

import typer

from shoal.cli import screen
from shoal.cli.client import connect, seg
from shoal.cli.documents import (
    EnvironmentOption,
    document_name,
    read_document,
    read_request,
    same_document,
)
from shoal.cli.errors import EXIT_OK, ApiError, CliError
from shoal.cli.options import (
    OutputOption,
    TimeoutOption,
    TokenOption,
    UrlOption,
    WaitOption,
    target,
)
from shoal.cli.output import OutputFormat, emit_data
from shoal.cli.preview import preview
from shoal.cli.runner import run
from shoal.cli.submit import Goal, submit

DocumentArg = Annotated[
    str, typer.Argument(help="Cluster document (native YAML/JSON or vcluster JSON), or -.")
]
ClusterArg = Annotated[str, typer.Argument(help="Cluster name or id.")]


def up(
    document: DocumentArg,
    environment: EnvironmentOption = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Create a cluster from a document and wait until it is ACTIVE (exit 0) or not (exit 1)."""

    async def body() -> int:
        content, kind = read_request(document, environment)
        async with connect(target(url, token)) as client:
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
    environment: EnvironmentOption = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Change nothing: show what applying the document to its existing cluster "
            "would do (creates, deletes, rolling-update batches).",
        ),
    ] = False,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Create the document's cluster, or change the existing one to match the document."""

    def read() -> tuple[bytes, str]:
        return read_request(document, environment) if environment else read_document(document)

    async def dry() -> int:
        content, kind = read()
        name = document_name(content)
        if name is None:
            raise CliError(f"{document} names no cluster; --dry-run needs an existing one")
        async with connect(target(url, token)) as client:
            try:
                await client.get(f"/v1/clusters/{seg(name)}")
            except ApiError as e:
                if e.status != 404:
                    raise
                raise CliError(
                    f"there is no cluster {name} yet, so applying {document} would create it; "
                    f"`shoal plan {document}` shows where its nodes would go"
                ) from None
            return await preview(client, name, content, kind, output)

    async def body() -> int:
        content, kind = read()
        name = document_name(content)
        async with connect(target(url, token)) as client:
            path = "/v1/clusters"
            if name is not None:
                try:
                    current = (await client.get(f"/v1/clusters/{seg(name)}"))["cluster"]
                    path = f"/v1/clusters/{seg(name)}"
                except ApiError as e:
                    if e.status != 404:
                        raise
                else:
                    if same_document(content, current.get("document")):
                        if output is OutputFormat.TABLE:
                            screen.out().print(f"cluster {name}: no change")
                        else:
                            emit_data({"action": None, "cluster": current}, output)
                        return EXIT_OK
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

    run(dry if dry_run else body)


def delete(
    cluster: ClusterArg,
    wait: Annotated[
        bool | None,
        typer.Option(
            "--wait/--no-wait",
            help="Return when the cluster is deleted. Default: wait, unless --url names a server.",
        ),
    ] = None,
    timeout: TimeoutOption = None,
    output: OutputOption = OutputFormat.TABLE,
    url: UrlOption = None,
    token: TokenOption = None,
) -> None:
    """Delete a cluster and all its nodes."""

    async def body() -> int:
        async with connect(target(url, token)) as client:
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
        async with connect(target(url, token)) as client:
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

"""`shoal up`, `apply`, `delete` and `scale`: cluster changes that wait for their action.

`apply --dry-run` changes nothing: it shows what applying the document to its existing cluster
would do (see preview.py), or, when the cluster does not exist yet, the placement `shoal plan`
finds for it, with `plan`'s exit codes (0 placed, 1 cannot be placed, 2 invalid).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote, seg
from shoal.cli.documents import (
    EnvironmentOption,
    NameOption,
    document_name,
    read_request,
    same_document,
)
from shoal.cli.errors import EXIT_OK, ApiError, escape
from shoal.cli.options import TimeoutOption, WaitOption
from shoal.cli.output import emit_data
from shoal.cli.submit import Goal, submit

DocumentArg = Annotated[
    str, typer.Argument(help="Cluster document (native YAML/JSON or vcluster JSON), or -.")
]
ClusterArg = Annotated[str, typer.Argument(help="Cluster name or id.")]


@remote()
async def up(
    s: Session,
    document: DocumentArg,
    environment: EnvironmentOption = None,
    name: NameOption = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
) -> int:
    """Create a cluster from a document and wait until it is ACTIVE (exit 0) or not (exit 1).

    `up` only creates: a document whose cluster exists already is refused, and `shoal apply`
    changes that cluster to match it (as `kubectl create` and `kubectl apply`)."""
    content, kind = read_request(document, environment, name)
    try:
        return await submit(
            s.client,
            "POST",
            "/v1/clusters",
            content=content,
            headers={"Content-Type": kind},
            output=s.output,
            wait=wait,
            timeout=timeout,
            fresh=True,
        )
    except ApiError as e:
        if e.status == 409 and any(d.get("path") == "/name" for d in e.details):
            given = " ".join(f"-e {env}" for env in environment or [])
            e.details.append(
                {
                    "path": "/name",
                    "message": f"`shoal apply {document}{' ' + given if given else ''}` "
                    "changes that cluster to match the document",
                }
            )
        raise


@remote()
async def apply(
    s: Session,
    document: DocumentArg,
    environment: EnvironmentOption = None,
    name: NameOption = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Change nothing: show what applying the document to its existing cluster "
            "would do (creates, deletes, rolling-update batches); for a new cluster, its "
            "placement as `shoal plan` finds it.",
        ),
    ] = False,
) -> int:
    """Create the document's cluster, or change the existing one to match the document."""
    if dry_run:
        return await _dry_run(s, document, environment, name)
    # A HOT template always travels as a stack-create body, so its cluster (the stack name)
    # is known and found, with or without environments.
    content, kind = read_request(document, environment, name)
    cluster = document_name(content)
    path = "/v1/clusters"
    if cluster is not None:
        try:
            current = (await s.client.get(f"/v1/clusters/{seg(cluster)}"))["cluster"]
            path = f"/v1/clusters/{seg(cluster)}"
        except ApiError as e:
            if e.status != 404:
                raise
        else:
            if same_document(content, current.get("document")):
                if s.table:
                    screen.out().print(f"cluster {escape(cluster)}: no change")
                else:
                    emit_data({"action": None, "cluster": current}, s.output)
                return EXIT_OK
    exists = path != "/v1/clusters"
    return await submit(
        s.client,
        "PUT" if exists else "POST",
        path,
        content=content,
        headers={"Content-Type": kind},
        output=s.output,
        wait=wait,
        timeout=timeout,
        fresh=not exists,
    )


async def _dry_run(
    s: Session, document: str, environment: list[Path] | None, name: str | None
) -> int:
    """What `apply` would do: the server's preview of a change to an existing cluster (a HOT
    template's conversion included), or, when the document's cluster does not exist yet, its
    create plan as `shoal plan` shows it."""
    from shoal.cli.plan import place
    from shoal.cli.preview import preview

    content, kind = read_request(document, environment, name)
    cluster = document_name(content)
    if cluster is not None:
        try:
            await s.client.get(f"/v1/clusters/{seg(cluster)}")
        except ApiError as e:
            if e.status != 404:
                raise
        else:
            return await preview(s.client, cluster, content, kind, s.output)
    shown = f"cluster {cluster}" if cluster else "cluster"
    screen.err().print(
        f"no {shown} yet: applying {document} would create it, "
        f"placed as `shoal plan` places it (Shoal places it again when it is applied):",
        markup=False,
    )
    return place(document, _plain(content, environment), s.output, environment=environment)


def _plain(content: bytes, environment: list[Path] | None) -> bytes:
    """The document itself out of what `read_request` made of it (stdin is read only once):
    with environments a Shoal document travels as `{document, environment}`; a HOT template is
    read again from its file by `place`."""
    if not environment:
        return content
    import json

    body = json.loads(content)
    inner = body.get("document") if isinstance(body, dict) else None
    return json.dumps(inner).encode() if inner is not None else content


@remote()
async def delete(
    s: Session,
    cluster: ClusterArg,
    wait: Annotated[
        bool | None,
        typer.Option(
            "--wait/--no-wait",
            help="Return when the cluster is deleted. Default: wait, unless --url names a server.",
        ),
    ] = None,
    timeout: TimeoutOption = None,
) -> int:
    """Delete a cluster and all its nodes (waiting first for an action it is busy with)."""
    path = f"/v1/clusters/{seg(cluster)}"
    if wait is None:
        wait = s.client.embedded
    if wait:
        # Issue 39: busy (a change, or a repair after a restart) is not a reason to give up.
        from shoal.cli.busy import submit_when_free

        return await submit_when_free(
            s.client, "DELETE", path, output=s.output, timeout=timeout, goal=Goal.DELETED
        )
    return await submit(s.client, "DELETE", path, output=s.output, wait=False, goal=Goal.DELETED)


@remote()
async def scale(
    s: Session,
    cluster: ClusterArg,
    count: Annotated[
        int, typer.Option("--count", "-n", min=0, help="The exact node or replica count.")
    ],
    nodegroup: Annotated[
        str | None,
        typer.Option("--nodegroup", "-g", help="Node group; optional if the cluster has one."),
    ] = None,
    workload: Annotated[
        str | None,
        typer.Option("--workload", "-w", help="Scale this workload's replicas instead."),
    ] = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
) -> int:
    """Resize a node group (or, with --workload, a workload) to exactly COUNT replicas."""
    body: dict[str, object]
    if workload is not None:
        if nodegroup is not None:
            raise typer.BadParameter("give --nodegroup or --workload, not both")
        body = {"scale_workload": {"workload": workload, "replicas": count}}
    else:
        resize: dict[str, object] = {"adjustment_type": "EXACT_CAPACITY", "number": count}
        if nodegroup is not None:
            resize["nodegroup"] = nodegroup
        body = {"resize": resize}
    return await submit(
        s.client,
        "POST",
        f"/v1/clusters/{seg(cluster)}/actions",
        json=body,
        output=s.output,
        wait=wait,
        timeout=timeout,
    )

"""`shoal nodegroup create|update|delete --cluster X ...`: node groups, one action each.

`create` takes the flags of seed 000's `magnum nodegroup-create --bay XXX --flavor m1.small
--count 2 --availability-zone us-east-1`; its name defaults to `ng-<flavor>-<zone>`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shoal.cli.command import Session, remote, seg
from shoal.cli.errors import ApiError
from shoal.cli.options import TimeoutOption, WaitOption
from shoal.cli.submit import submit

if TYPE_CHECKING:
    from shoal.cli.client import ShoalClient

app = typer.Typer(help="Add, change and remove a cluster's node groups.", no_args_is_help=True)

ClusterOption = Annotated[
    str, typer.Option("--cluster", "--bay", "-c", help="The cluster (name or id).")
]
NameArg = Annotated[str, typer.Argument(help="Node group name.")]
MinOption = Annotated[int | None, typer.Option("--min", min=0, help="Fewest replicas.")]
MaxOption = Annotated[int | None, typer.Option("--max", min=0, help="Most replicas.")]


@app.command("create")
@remote()
async def create(
    s: Session,
    cluster: ClusterOption,
    flavor: Annotated[str, typer.Option("--flavor", help="Server flavor, e.g. m1.small.")],
    count: Annotated[int, typer.Option("--count", "-n", min=0, help="Replicas.")] = 1,
    zones: Annotated[
        list[str] | None,
        typer.Option("--availability-zone", "--zone", help="Zone(s) to place in; repeatable."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Default: ng-<flavor>-<zone>.")] = None,
    image: Annotated[str, typer.Option("--image", help="Server image.")] = "cirros",
    min_size: MinOption = None,
    max_size: MaxOption = None,
    role: Annotated[str | None, typer.Option("--role", help="The group's role.")] = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
) -> int:
    """Add a node group of COUNT servers of one flavor, in the given zone(s)."""
    group: dict[str, Any] = {
        "profile": {"type": "server", "flavor": flavor, "image": image},
        "count": count,
    }
    if zones:
        group["zones"] = list(zones)
    for key, value in (("min", min_size), ("max", max_size), ("role", role)):
        if value is not None:
            group[key] = value
    group["name"] = name or await free_name(s.client, cluster, flavor, zones or [])
    try:
        return await submit(
            s.client,
            "POST",
            f"/v1/clusters/{seg(cluster)}/nodegroups",
            json=group,
            output=s.output,
            wait=wait,
            timeout=timeout,
        )
    except ApiError as e:
        in_flags(e)
        raise


@app.command("update")
@remote()
async def update(
    s: Session,
    cluster: ClusterOption,
    name: NameArg,
    count: Annotated[int | None, typer.Option("--count", "-n", min=0, help="Replicas.")] = None,
    min_size: MinOption = None,
    max_size: MaxOption = None,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
) -> int:
    """Change a node group's count and bounds."""
    changes = {
        k: v for k, v in (("count", count), ("min", min_size), ("max", max_size)) if v is not None
    }
    if not changes:
        raise typer.BadParameter("say what to change: --count, --min or --max")
    return await submit(
        s.client,
        "PATCH",
        f"/v1/clusters/{seg(cluster)}/nodegroups/{seg(name)}",
        json=changes,
        output=s.output,
        wait=wait,
        timeout=timeout,
    )


@app.command("delete")
@remote()
async def delete(
    s: Session,
    cluster: ClusterOption,
    name: NameArg,
    wait: WaitOption = True,
    timeout: TimeoutOption = None,
) -> int:
    """Remove a node group and its nodes."""
    return await submit(
        s.client,
        "DELETE",
        f"/v1/clusters/{seg(cluster)}/nodegroups/{seg(name)}",
        output=s.output,
        wait=wait,
        timeout=timeout,
    )


def default_name(flavor: str, zones: list[str]) -> str:
    """`ng-m1-small-az1`: the seed's nodegroup, named after its flavor and zone."""
    raw = "-".join(["ng", flavor, *zones[:1]])
    return re.sub(r"[^A-Za-z0-9_-]+", "-", raw)[:56].strip("-_") or "ng"


async def free_name(client: ShoalClient, cluster: str, flavor: str, zones: list[str]) -> str:
    """`default_name`, with `-2`, `-3`... when the cluster already has a group by that name."""
    base = default_name(flavor, zones)
    body = await client.get(f"/v1/clusters/{seg(cluster)}/nodegroups")
    taken = {g.get("name") for g in body.get("nodegroups") or []}
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}-{i}"
    return name


_IN_GROUP = re.compile(r"^/node_groups/\d+(?P<rest>/.*)?$")
_FLAGS = {
    "/profile/flavor": "--flavor",
    "/profile/image": "--image",
    "/profile": "--flavor/--image",
    "/count": "--count",
    "/min": "--min",
    "/max": "--max",
    "/role": "--role",
    "/name": "--name",
    "": "--name",
}


def in_flags(e: ApiError) -> None:
    """Name the flags the user typed in a refusal, not the pointers of a document they never
    wrote (`/node_groups/4/zones/0` is `--availability-zone` here)."""
    for d in e.details:
        found = _IN_GROUP.match(str(d.get("path") or ""))
        if found is None:
            continue
        rest = found.group("rest") or ""
        zone = re.match(r"^/zones(?:/(\d+))?", rest)
        if zone:
            d["path"] = "--availability-zone" + (
                f" (#{int(zone.group(1)) + 1})" if zone.group(1) else ""
            )
        else:
            d["path"] = _FLAGS.get(rest, _FLAGS.get(rest.rsplit("/", 1)[0], rest or "--name"))

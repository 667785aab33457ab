"""`shoal plan DOCUMENT`: place a cluster document on an inventory and show the placement.

Exit codes are a contract: 0 placed, 1 infeasible (with reasons), 2 invalid input.
With `--cluster NAME` it asks Shoal instead what applying the document to that existing
cluster would do (see preview.py); without it, it runs offline and talks to no one.
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shoal.cli.command import Session, remote
from shoal.cli.documents import (
    EnvironmentOption,
    is_hot_file,
    read_document,
    read_environments,
    read_request,
)
from shoal.cli.errors import CliError, escape
from shoal.cli.output import OutputFormat, console, emit_data, report_problems

if TYPE_CHECKING:
    from shoal.placement import PlacementResult

EXIT_PLACED, EXIT_INFEASIBLE, EXIT_INVALID = 0, 1, 2
MAX_TIME_LIMIT_S = 3600
"""The bound of `--time-limit` and of the placement_time_limit_s setting (settings.py)."""


class Objective(StrEnum):
    """The placement objectives, named here so parsing the command line imports no model."""

    SPREAD = "spread"
    PACK = "pack"


@remote(output=False)
async def plan(
    s: Session,
    document: Annotated[
        str, typer.Argument(help="Cluster document (native YAML/JSON or vcluster JSON), or -.")
    ],
    inventory: Annotated[
        Path | None,
        typer.Option("--inventory", "-i", help="Inventory YAML; default: 2 zones x 3 hosts."),
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o")] = OutputFormat.TABLE,
    objective: Annotated[
        Objective | None, typer.Option("--objective", help="Override the document's objective.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Tie-break seed; same seed, same placement.")] = 0,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            min=0.01,
            max=MAX_TIME_LIMIT_S,
            help="Seconds the exact method may search before answering 'undecided' "
            "(default: the placement_time_limit_s setting, 10).",
        ),
    ] = None,
    environment: EnvironmentOption = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            "-c",
            help="Show what applying the document to this existing cluster would do "
            "(asks Shoal: creates, deletes, rolling-update batches).",
        ),
    ] = None,
) -> int:
    """Place the whole cluster at once, or explain why it cannot be placed.

    With --cluster, preview a change to an existing cluster instead.
    """
    if cluster is not None:
        from shoal.cli.preview import preview

        offline = [n for n, v in (("--inventory", inventory), ("--objective", objective)) if v]
        if offline:
            raise CliError(
                f"{', '.join(offline)} is for offline placement; with --cluster the "
                "server's inventory and the document's objective are used"
            )
        content, kind = (
            read_request(document, environment) if environment else read_document(document)
        )
        return await preview(s.client, cluster, content, kind, output)
    content, _ = read_document(document)
    return place(
        document,
        content,
        output,
        inventory=inventory,
        objective=objective,
        seed=seed,
        time_limit=time_limit,
        environment=environment,
    )


def place(
    document: str,
    content: bytes,
    output: OutputFormat,
    *,
    inventory: Path | None = None,
    objective: Objective | None = None,
    seed: int = 0,
    time_limit: float | None = None,
    environment: list[Path] | None = None,
) -> int:
    """`shoal plan` offline: place `content` (read from `document`) on `inventory` (default:
    2 zones x 3 hosts) and show it. The exit code: 0 placed, 1 infeasible, 2 invalid."""
    from shoal.documents import load_cluster, load_inventory_file
    from shoal.model import InvalidDocument
    from shoal.model import Objective as ModelObjective
    from shoal.model.catalogs import default_inventory
    from shoal.placement import solve
    from shoal.service.errors import ErrorKind, ServiceError
    from shoal.service.footprint import check_size

    envs = [] if is_hot_file(document) else read_environments(list(environment or []))
    try:
        inv = load_inventory_file(inventory) if inventory else default_inventory()
        notices: list[dict[str, str]] = []
        if is_hot_file(document):
            from shoal.documents.hot import read_hot_files

            hot = read_hot_files(Path(document), list(environment or []), inv)
            if hot.spec is None:
                raise InvalidDocument(hot.problems)
            spec, notices = hot.spec, [n.as_dict() for n in hot.notices]
        else:
            source = "<stdin>" if document == "-" else document
            spec = load_cluster(content, inv, source=source, environments=envs)
    except InvalidDocument as bad:
        problems = [p.as_dict() for p in bad.problems]
        if output is OutputFormat.TABLE:
            report_problems(problems, f"{len(problems)} problem(s) in the input")
        else:
            emit_data({"feasible": False, "valid": False, "problems": problems}, output)
        return EXIT_INVALID
    try:
        # O(groups) bounds first: a billion replicas must not reach the per-node solver.
        check_size(spec, inv)
    except ServiceError as refused:
        invalid = refused.kind is ErrorKind.INVALID
        if output is OutputFormat.TABLE:
            report_problems(refused.details, refused.message)
        else:
            found = {"feasible": False, "valid": not invalid, "problems": refused.details}
            emit_data(found, output)
        return EXIT_INVALID if invalid else EXIT_INFEASIBLE
    chosen = ModelObjective(objective.value) if objective is not None else None
    limit = time_limit if time_limit is not None else _setting_time_limit()
    result = solve(spec, inv, objective=chosen, seed=seed, time_limit_s=limit)
    from shoal.cli.software_view import show_shape, show_software, software_view

    if output is OutputFormat.TABLE:
        if environment and not is_hot_file(document):
            show_shape(spec)
        show_result(result, spec.name)
        if spec.software.deployments:
            show_software(spec)
        for n in notices:
            console().print(
                f"  [yellow]ignored:[/] {escape(n['path'] or '/')}: {escape(n['message'])}"
            )
    else:
        extra: dict[str, object] = {"notices": notices} if notices else {}
        if spec.software.deployments or environment:
            extra |= software_view(spec)
        emit_data({"cluster": spec.name, "valid": True, **result.as_dict(), **extra}, output)
    return EXIT_PLACED if result.feasible else EXIT_INFEASIBLE


def _setting_time_limit() -> float | None:
    """The `placement_time_limit_s` setting, None when unset (placement's default). Read
    without the server's `Settings` (pydantic-settings: a third of this command's start-up,
    issue 37), with its bounds."""
    from shoal.cli.where import setting

    raw = setting("placement_time_limit_s")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_TIME_LIMIT_S:
        raise CliError(
            f"invalid Shoal settings: placement_time_limit_s: {raw!r} is not a number of "
            f"seconds in (0, {MAX_TIME_LIMIT_S}]",
            EXIT_INVALID,
        )
    return value


def show_result(result: PlacementResult, name: str) -> None:
    from rich.table import Table

    from shoal.placement import PlacementStatus

    out = console()
    if result.status is PlacementStatus.UNDECIDED:
        out.print(
            f"[bold yellow]cluster {escape(name)}: placement undecided[/] (not proven infeasible):"
        )
        for r in result.reasons:
            out.print(f"  - {escape(r)}")
        return
    if not result.feasible:
        out.print(
            f"[bold red]cluster {escape(name)} cannot be placed[/] (answered by {result.solver}):"
        )
        for r in result.reasons:
            out.print(f"  - {escape(r)}")
        return
    table = Table(title=f"placement of {name}", title_justify="left")
    for col in ("node", "kind", "role", "flavor", "zone", "host"):
        table.add_column(col)
    for a in result.assignments:
        role = a.role or a.part or ""
        if a.role and a.part:
            role = f"{a.role}/{a.part}"
        table.add_row(a.node, a.kind, role, a.flavor or "", a.zone, a.host)
    out.print(table)
    if result.checks:
        rules = Table(title="rules checked", title_justify="left")
        for col in ("grouping", "rule", "scope", "members", "domains used", "ok"):
            rules.add_column(col)
        for c in result.checks:
            rules.add_row(
                c.grouping,
                c.rule,
                c.scope,
                str(c.members),
                str(c.domains_used),
                "yes" if c.satisfied else "[yellow]soft violation[/]",
            )
        out.print(rules)
    if result.replicas:
        replicas = Table(title="workloads' replicas on the cluster's servers", title_justify="left")
        for col in ("replica", "workload", "node", "host", "zone"):
            replicas.add_column(col)
        for row in result.replicas:
            replicas.add_row(row.replica, row.workload, row.node, row.host, row.zone)
        out.print(replicas)
    hosts = len({a.host for a in result.assignments})
    out.print(
        f"{len(result.assignments)} nodes on {hosts} hosts; objective {result.objective}; "
        f"solver {result.solver}; {len(result.soft_violations)} soft violation(s)"
    )
    for v in result.soft_violations:
        out.print(f"  [yellow]soft:[/] {escape(v.message)}")

"""`shoal import senlin --database URL [--project P] [--dry-run]`: leave Senlin for Shoal.

Sends the admin import (`POST /v1/imports/senlin`) and prints its report: per cluster,
imported, unchanged (imported before) or refused with why, and every policy, receiver and node
that did not map. Exit 0 when every cluster is imported (or was already), 1 when the database
cannot be read or a cluster was refused, 2 for invalid input (a bad URL) or a refused request.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.command import Session, remote
from shoal.cli.errors import EXIT_FAILED, EXIT_OK
from shoal.cli.output import emit_data
from shoal.cli.tables import table, text

app = typer.Typer(help="Import clusters from another service (admin).", no_args_is_help=True)


@app.command("senlin")
@remote()
async def senlin(
    s: Session,
    database: Annotated[
        str,
        typer.Option(
            "--database",
            help="Senlin's database, read only: mysql+pymysql://USER[:PASSWORD]@HOST/DATABASE",
        ),
    ],
    project: Annotated[
        str | None, typer.Option("--project", help="Only this Senlin project's clusters.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; write nothing.")
    ] = False,
) -> int:
    """Import a Senlin deployment's clusters, adopting their servers in place."""
    body: dict[str, Any] = {"database": database, "dry_run": dry_run}
    if project is not None:
        body["project"] = project
    report: dict[str, Any] = await s.client.call("POST", "/v1/imports/senlin", json=body)
    if s.table:
        _show(report)
    else:
        emit_data(report, s.output)
    refused = report.get("summary", {}).get("refused", 0)
    return EXIT_FAILED if refused else EXIT_OK


def _show(report: dict[str, Any]) -> None:
    title = "Senlin import (dry run: nothing written)" if report.get("dry_run") else "Senlin import"
    t = table(title, ("cluster", "id", "outcome", "nodes", "not mapped", "why / warnings"))
    for c in report.get("clusters", []):
        adopted = sum(1 for n in c["nodes"] if n["adopted"])
        unmapped = [
            f"{x['name'] or x['id']} ({x['type']})"
            for x in c["policies"] + c["receivers"]
            if not x["mapped"]
        ] + [f"node {n['name']}" for n in c["nodes"] if not n["adopted"]]
        why = c["reasons"] + c["warnings"]
        why += [f"{n['name']}: {n['why']}" for n in c["nodes"] if not n["adopted"]]
        why += [
            f"{x['name']}: {x['why']}" for x in c["policies"] + c["receivers"] if not x["mapped"]
        ]
        t.add_row(
            text(c["name"]),
            text(c["id"]),
            text(c["outcome"]),
            f"{adopted}/{len(c['nodes'])}",
            text(unmapped),
            text("; ".join(why)),
        )
    screen.out().print(t)
    for n in report.get("standalone_nodes", []):
        screen.out().print(f"standalone node {n['name']} ({n['id']}): {n['why']}")
    screen.out().print(report.get("credentials", {}).get("why", ""))

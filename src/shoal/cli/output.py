"""Output formats shared by every command: a Rich table for people, JSON or YAML for tools."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"


def console(stderr: bool = False) -> Console:
    """The console every command prints through (`screen.py`): piped, 240 columns wide, so a
    table's rows are not folded at Rich's 80 (issue 36: `plan`, `deployments` and `workloads`
    folded where the other tables did not)."""
    from shoal.cli import screen

    return screen.err() if stderr else screen.out()


def emit_data(data: Any, fmt: OutputFormat) -> None:
    """Print `data` as JSON or YAML on stdout (the stable, machine-readable forms)."""
    if fmt is OutputFormat.JSON:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        import yaml

        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))


def escape(text: str) -> str:
    """User text made literal for Rich (see shoal.cli.errors.escape)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def report_problems(problems: list[dict[str, str]], title: str) -> None:
    """Every problem of an invalid input, one per line, on stderr."""
    err = console(stderr=True)
    err.print(f"[bold red]error:[/] {escape(title)}")
    for p in problems:
        err.print(f"  [cyan]{escape(p['path'] or '/')}[/]: {escape(p['message'])}", markup=True)

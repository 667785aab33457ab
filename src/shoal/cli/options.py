"""Options every command shares: where Shoal is (`--url`, `--token`) and the output format.

`--url` / `SHOAL_URL` picks a server; without it the command talks to the background Shoal of
the data directory `SHOAL_HOME` names, started on first use (see background.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from shoal.cli.output import OutputFormat

UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        envvar="SHOAL_URL",
        help="Talk to the Shoal server at this URL; default: the background Shoal of SHOAL_HOME.",
        show_envvar=True,
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="SHOAL_TOKEN",
        help="Bearer token for --url; default: the admin token in $SHOAL_HOME, if any.",
        show_envvar=True,
    ),
]
OutputOption = Annotated[OutputFormat, typer.Option("--output", "-o", help="table, json or yaml.")]
WaitOption = Annotated[
    bool, typer.Option("--wait/--no-wait", help="Return only when the action has ended.")
]
TimeoutOption = Annotated[
    float | None,
    typer.Option("--timeout", min=0, help="Give up waiting after this many seconds."),
]


@dataclass(frozen=True, slots=True)
class Target:
    """Where the command's requests go: a server URL, or None for the background Shoal."""

    url: str | None = None
    token: str | None = None

"""Exit codes, the errors commands raise, and how each is told to the user.

Exit codes are a contract: 0 success, 1 the action failed (or the cluster is not ACTIVE, the
cluster cannot be placed, or Shoal could not be reached), 2 invalid input or a refused request.
An unplaceable document exits 1 from `up`/`apply` as it does from `plan`: it is valid input
the cloud has no room for. Every refusal prints its
`error.details` entries as `path: message` on stderr, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shoal.cli.screen import err as console_err

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130
UNPLACEABLE = "unplaceable"
"""The API's error code for a valid cluster that does not fit."""


def escape(text: str) -> str:
    """User text (a message, a path, a name) made literal for Rich: `[/]` or `[bold]` in a
    value prints as written instead of being read as markup (or crashing the printer)."""
    from rich.markup import escape as rich_escape  # lazily, as the CLI loads Rich

    return rich_escape(text)


class CliError(Exception):
    """A failure already phrased for the user, with the exit code it ends the command with."""

    def __init__(self, message: str, code: int = EXIT_INVALID) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def report(self) -> None:
        console_err().print(f"[bold red]error:[/] {escape(self.message)}")


@dataclass
class ApiError(Exception):
    """An error answer from the API, in its one error shape (or what stood in for it)."""

    status: int
    code: str
    message: str
    details: list[dict[str, Any]] = field(default_factory=list)
    method: str = ""
    path: str = ""

    @classmethod
    def from_reply(cls, status: int, body: Any, method: str, path: str) -> ApiError:
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):
            details = [d for d in err.get("details") or [] if isinstance(d, dict)]
            return cls(
                status,
                str(err.get("code", "error")),
                str(err.get("message") or err.get("title") or "request refused"),
                details,
                method,
                path,
            )
        text = body.get("detail") if isinstance(body, dict) else body
        return cls(status, "error", str(text or f"HTTP {status}"), [], method, path)

    @property
    def exit_code(self) -> int:
        if self.code == UNPLACEABLE:
            return EXIT_FAILED
        return EXIT_INVALID if 400 <= self.status < 500 else EXIT_FAILED

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"

    def report(self) -> None:
        err = console_err()
        if self.status == 404:
            err.print(f"[bold red]not found:[/] {escape(self.message)}", markup=True)
        elif self.status in (401, 403):
            err.print(
                f"[bold red]{'unauthorized' if self.status == 401 else 'forbidden'}:[/] "
                f"{escape(self.message)} (check --token / SHOAL_TOKEN)"
            )
        elif self.status >= 500:
            err.print(f"[bold red]server error {self.status}:[/] {escape(self.message)}")
        else:
            err.print(f"[bold red]error:[/] {escape(self.message)}")
        for d in self.details:
            path, message = escape(str(d.get("path") or "/")), escape(str(d.get("message", "")))
            err.print(f"  [cyan]{path}[/]: {message}", markup=True)


class Unreachable(CliError):
    """Shoal's server did not answer."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"cannot reach Shoal at {url}: {why}", EXIT_FAILED)

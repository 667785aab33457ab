"""`@remote`: what every command that talks to Shoal shares, written once.

A remote command is an `async def` taking a `Session` first and returning its exit code; the
decorator gives it the `--output`, `--url` and `--token` options (after its own, so `--help`
reads as before), makes the `Session` and runs the body with `runner.run`, which reports
errors and exits. The client is made on first use of `Session.client`: a body checks its own
input before anything starts a background Shoal.

This module is on the path of `shoal --help`: it imports only typer and the option types; the
client, the event loop and Rich are imported when a command runs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec
from urllib.parse import quote

from shoal.cli.options import OutputOption, Target, TokenOption, UrlOption
from shoal.cli.output import OutputFormat

if TYPE_CHECKING:
    from shoal.cli.client import ShoalClient

P = ParamSpec("P")
Body = Callable[Concatenate["Session", P], Coroutine[Any, Any, int]]


class Session:
    """One run of a remote command: where Shoal is, the output format, and its client."""

    def __init__(self, target: Target, output: OutputFormat) -> None:
        self.target = target
        self.output = output
        self._client: ShoalClient | None = None

    @property
    def client(self) -> ShoalClient:
        """The client for `target`, made (and a background Shoal started) on first use."""
        if self._client is None:
            from shoal.cli.client import open_client

            self._client = open_client(self.target)
        return self._client

    @property
    def table(self) -> bool:
        """Whether the output is for people (a table), not data (JSON or YAML)."""
        return self.output is OutputFormat.TABLE


def seg(value: str) -> str:
    """A user-given name or id as one URL path segment."""
    return quote(value, safe="")


def remote(
    *, output: bool = True, until_interrupted: str | None = None
) -> Callable[[Body[P]], Callable[P, None]]:
    """Turn `body(session, ...)` into a typer command with the shared options.

    `output=False`: the command has no `--output` (or declares its own). `until_interrupted`:
    the name of the command's flag (`--watch`, `--follow`) with which Ctrl-C is how it ends.
    """

    def wrap(body: Body[P]) -> Callable[P, None]:
        signature = inspect.signature(body, eval_str=True)
        own = list(signature.parameters.values())[1:]
        if until_interrupted is not None and until_interrupted not in signature.parameters:
            raise TypeError(f"{body.__name__} has no parameter {until_interrupted}")
        shared = _shared(output)

        @functools.wraps(body)
        def command(*args: P.args, **kwargs: P.kwargs) -> None:
            from shoal.cli.runner import run

            fmt = kwargs.pop("output", OutputFormat.TABLE) if output else OutputFormat.TABLE
            url, token = kwargs.pop("url", None), kwargs.pop("token", None)
            session = Session(Target(_given(url), _given(token)), OutputFormat(str(fmt)))
            quiet = bool(kwargs.get(until_interrupted)) if until_interrupted else False
            run(lambda: body(session, *args, **kwargs), until_interrupted=quiet)

        params = [*own, *shared]
        # typer reads the options from the signature; the annotations are already evaluated.
        command.__dict__["__signature__"] = signature.replace(
            parameters=params, return_annotation=None
        )
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return wrap


def _given(value: object) -> str | None:
    """An option's value; an empty one (`--token ""`, `SHOAL_URL=`) as not given."""
    return value if isinstance(value, str) and value else None


def _shared(output: bool) -> list[inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    found = [
        inspect.Parameter("url", keyword, default=None, annotation=UrlOption),
        inspect.Parameter("token", keyword, default=None, annotation=TokenOption),
    ]
    if output:
        found.insert(
            0,
            inspect.Parameter(
                "output", keyword, default=OutputFormat.TABLE, annotation=OutputOption
            ),
        )
    return found

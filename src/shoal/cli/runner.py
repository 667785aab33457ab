"""Running a command's coroutine: one event loop, errors told plainly, an exit code at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

import typer

from shoal.cli.errors import EXIT_INTERRUPTED, EXIT_OK, ApiError, CliError
from shoal.cli.screen import err

EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE, what a shell reports for a tool whose reader closed the pipe."""


def run(
    body: Callable[[], Coroutine[Any, Any, int]], *, until_interrupted: bool = False
) -> NoReturn:
    """Run `body()` and exit with the code it returns, or with the code of what it raised.

    `until_interrupted`: Ctrl-C is how the command normally ends (exit 0, quietly).
    """
    import asyncio

    try:
        code = asyncio.run(body())
    except ApiError as e:
        e.report()
        code = e.exit_code
    except CliError as e:
        e.report()
        code = e.code
    except KeyboardInterrupt:
        if until_interrupted:
            code = EXIT_OK
        else:
            err().print("interrupted")
            code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`shoal get nodes | head -1`): stop quietly, as a shell tool
        # killed by SIGPIPE would. Any action goes on in the server that runs it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_BROKEN_PIPE
    raise typer.Exit(code)

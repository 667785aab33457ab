"""Consoles: stdout for results, stderr for progress and errors.

Piped output (a script, a test) gets wide lines instead of Rich's 80 columns, so table rows
are not folded.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 240


def out() -> Console:
    return _console(stderr=False)


def err() -> Console:
    return _console(stderr=True)


def _console(stderr: bool) -> Console:
    from rich.console import Console

    c = Console(stderr=stderr, highlight=False, soft_wrap=False)
    if not c.is_terminal and "COLUMNS" not in os.environ:
        c.width = PIPE_WIDTH
        # Piped messages stay one line each, however long: a script greps them whole.
        c.soft_wrap = stderr
    return c

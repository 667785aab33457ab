"""Pausing the cyclic garbage collector over work that only builds objects it keeps.

Issue 23: a solve and a plan each make objects by the hundred thousand (node specs, steps,
rows, inputs) that all live until they return; the collector, run again and again over them
meanwhile, finds nothing and cost a fifth of their CPU. One helper serves both.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, back on after only if it was on before: paused
    blocks in several threads at once leave it on once the first that found it on ends."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

"""Pausing the cyclic garbage collector over work that only builds objects it keeps.

Why it exists: a solve and a plan each make objects by the hundred thousand (node specs, steps,
rows, inputs) that all live until they return; the collector, run again and again over them
meanwhile, finds nothing. The benchmarks that justify it: `benchmarks/scale.py` (`create-pg`,
issue 23: a fifth of the planner's CPU) and `benchmarks/placement.py` (`growth`, `10k-on-5000`,
`100k-on-50000`); measured again for issue 40 on this machine, one solve of scale.py's shape
took 1.26-1.35 s of CPU at 100,000 nodes with the collector on and 0.99 s paused, and the
10,000-node `10k-on-5000` cluster 0.18 s against 0.13 s.

The switch is process-wide, so only the code that owns the process decides: the engine's
planning phase (`engine/planner.py`, in a `shoal server` whose every thread is its own) and
the benchmarks. The pure solver never pauses it: it also runs in the API's thread pool (the
admission's dry run) and in the CLI, where a small cluster gains nothing.
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

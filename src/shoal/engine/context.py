"""What the engine's parts share: the store, the provider, the clock, who they are, and how to
reach the rest of the engine — handed down by the runtime instead of the runtime itself.

Before, `Manager(engine)` and `rolling.advance(engine, …)` reached into the runtime for these,
so the runtime, the manager and the rolling update imported each other. Now the runtime builds
one `EngineContext` and the parts depend on it alone (import-linter keeps it that way); a new
kind of engine work (software deployments, say) takes the same context.

One threading rule: database work is synchronous SQLAlchemy, so it never runs on the event
loop; it goes through `run_in_thread`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from shoal.clock import Clock
from shoal.engine.member_marks import MemberMarks
from shoal.model.inventory import Inventory
from shoal.providers.base import Provider
from shoal.store.database import Database

MANAGE_LIMIT_S = 60.0
"""The longest one cluster's turn in a manager or keeper tick may take (`manage_limit_s`)."""

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EngineContext:
    db: Database
    provider: Provider
    clock: Clock
    owner: str
    """The engine's id: the owner of the actions and leases it holds."""
    inventory: Callable[[], Awaitable[Inventory]]
    """The provider's inventory as last read (read once if never)."""
    refresh_inventory: Callable[[], Awaitable[Inventory]]
    """Read the provider's inventory again (hosts fail and recover)."""
    wake: Callable[[], None]
    """New work was recorded: let the engine's loops look now rather than at the next poll."""
    members: MemberMarks = field(default_factory=MemberMarks)
    """Clusters whose servers the node work changed (the manager re-syncs their networking
    even while an action runs: engine/member_marks.py)."""
    call_timeout_s: float = 900.0
    """A provider call's time limit (`provider_call_timeout_s`)."""

    @property
    def manage_limit_s(self) -> float:
        """How long the manager and the workload keeper give one cluster's work in a tick: a
        provider or runtime that hangs (podman stopped mid-call) costs that cluster's turn,
        not every cluster's management for as long as it hangs (issue 39, item 4)."""
        return min(self.call_timeout_s, MANAGE_LIMIT_S)

    async def run_in_thread(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run blocking (database) work off the event loop."""
        return await asyncio.to_thread(fn, *args, **kwargs)

"""Helpers for engine tests: a service + engine pair over one store and a sim provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from shoal.clock import Clock, ManualClock, SystemClock
from shoal.engine import Engine
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionStatus
from shoal.model.inventory import Inventory
from shoal.providers.sim.provider import SimProvider
from shoal.service.clusters import ClusterService
from shoal.store import actions as action_repo
from shoal.store.database import Database
from shoal.store.records import ActionRecord, Principal

ADMIN = Principal("admin", True)


@dataclass
class Rig:
    db: Database
    provider: SimProvider
    engine: Engine
    service: ClusterService
    inventory: Inventory

    async def wait(self, action_id: str, timeout: float = 60.0) -> ActionRecord:
        """Until the action ends (bounded, so a bug fails the test instead of hanging it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            with self.db.reading() as conn:
                action = action_repo.get_action(conn, action_id)
            assert action is not None
            if action.status.is_terminal:
                return action
            assert loop.time() < deadline, f"action {action_id} still {action.status}"
            await asyncio.sleep(0.01)


def make_rig(
    db: Database,
    *,
    provider: SimProvider | None = None,
    clock: Clock | None = None,
    retry: RetryPolicy | None = None,
    lease_s: float = 30.0,
    engine_id: str | None = None,
) -> Rig:
    inventory = provider._inventory if provider is not None else default_inventory()
    provider = provider or SimProvider(inventory)
    engine = Engine(
        db,
        provider,
        clock=clock or SystemClock(),
        poll_s=0.01,
        retry=retry or RetryPolicy(attempts=3, backoff_s=0.0),
        lease_s=lease_s,
        engine_id=engine_id,
    )
    service = ClusterService(db, lambda: inventory, clock or SystemClock(), engine.wake)
    return Rig(db, provider, engine, service, inventory)


def succeeded(action: ActionRecord) -> bool:
    return action.status is ActionStatus.SUCCEEDED


async def managed_at(rig: Rig, clock: ManualClock, now: float, limit: float = 60.0) -> None:
    """Until a management pass that began at engine time `now` or later has finished, so what
    it would have done is in the store (bounded by real time, generous for a loaded machine).
    Replaces sleeping a fixed time and hoping the manager had looked. A pass still running when
    the clock moved sleeps a whole tick from `now`: then the clock is moved one tick on."""
    assert rig.engine.manager is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    nudge_at = loop.time() + 2.0
    while rig.engine.managed_through < now:
        assert loop.time() < deadline, f"the manager never looked at the cluster as of {now}"
        if loop.time() > nudge_at:
            clock.advance(rig.engine.manager.tick_s)
            nudge_at = loop.time() + 2.0
        await asyncio.sleep(0.01)


async def decided_at(rig: Rig, now: float, limit: float = 60.0) -> None:
    """Until a deployer decision pass (rollout gates included) that began at engine time `now`
    or later has finished."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while rig.engine.deployer.decided_through < now:
        assert loop.time() < deadline, f"the deployer never decided as of {now}"
        await asyncio.sleep(0.01)

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
from tests.support.polling import until

ADMIN = Principal("admin", True)


@dataclass
class Rig:
    db: Database
    provider: SimProvider
    engine: Engine
    service: ClusterService
    inventory: Inventory

    async def wait(self, action_id: str) -> ActionRecord:
        """Until the action ends (bounded, so a bug fails the test instead of hanging it)."""

        def ended() -> ActionRecord | None:
            with self.db.reading() as conn:
                action = action_repo.get_action(conn, action_id)
            assert action is not None
            return action if action.status.is_terminal else None

        return await until(ended, f"action {action_id} to end", every_s=0.01)


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


async def managed_at(rig: Rig, clock: ManualClock, now: float) -> None:
    """Until a management pass that began at engine time `now` or later has finished, so what
    it would have done is in the store (bounded by real time, generous for a loaded machine).
    Replaces sleeping a fixed time and hoping the manager had looked. A pass still running when
    the clock moved sleeps a whole tick from `now`: then the clock is moved one tick on."""
    manager = rig.engine.manager
    assert manager is not None
    loop = asyncio.get_running_loop()
    nudge_at = loop.time() + 2.0

    def looked() -> bool:
        nonlocal nudge_at
        if rig.engine.managed_through >= now:
            return True
        if loop.time() > nudge_at:
            clock.advance(manager.tick_s)
            nudge_at = loop.time() + 2.0
        return False

    await until(looked, f"the manager to look at the cluster as of {now}", every_s=0.01)


async def decided_at(rig: Rig, now: float) -> None:
    """Until a deployer decision pass (rollout gates included) that began at engine time `now`
    or later has finished."""
    await until(
        lambda: rig.engine.deployer.decided_through >= now,
        f"the deployer to decide as of {now}",
        every_s=0.01,
    )

"""Assembling a running Shoal from settings: store, provider, engine and service.

`shoal server` and the embedded CLI both start here, so they behave the same. Opening migrates
the database, asks the provider for its inventory once, and (first time only) creates the admin
project with a token written to `<home>/admin-token`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from shoal.clock import Clock, SystemClock
from shoal.documents import load_inventory_file
from shoal.engine import Engine
from shoal.engine.nodework import RetryPolicy
from shoal.files import private_dir
from shoal.model.inventory import Inventory
from shoal.placement import configure as configure_placement
from shoal.providers.base import Provider
from shoal.providers.capabilities import Capabilities
from shoal.providers.registry import make_provider
from shoal.service.clusters import ClusterService
from shoal.service.containers import ContainerGate
from shoal.service.deployments import DeploymentService
from shoal.service.limits import QUOTA_RESOURCES, Limits
from shoal.service.profiles import ProfileService
from shoal.service.queries import Queries
from shoal.settings import Settings
from shoal.store import auth
from shoal.store.database import Database
from shoal.telemetry.notify import BusNotifier

TOKEN_FILE = "admin-token"

log = logging.getLogger("shoal.runtime")


@dataclass
class Runtime:
    settings: Settings
    db: Database
    provider: Provider
    engine: Engine
    service: ClusterService
    clock: Clock
    inventory: Inventory
    new_admin_token: str | None
    queries: Queries
    profiles: ProfileService
    deployments: DeploymentService = field(init=False)
    capabilities: Capabilities = field(init=False)
    """What the provider can do beyond `Provider`, read once here (issue 40)."""

    def __post_init__(self) -> None:
        self.capabilities = Capabilities.of(self.provider)
        if self.capabilities.single_tenant:
            log.warning("%s: this Shoal serves its admin only", self.capabilities.single_tenant)
        # Software deployments (issue 11): listings, logs, and the agents' metadata and signals.
        self.deployments = DeploymentService(
            self.db, self.engine.inventory_now, self.clock, self.engine.deployer.wake
        )
        self.engine.deployer.agent_url = self.settings.agent_url

    @property
    def token_path(self) -> Path:
        return self.settings.home / TOKEN_FILE

    @classmethod
    async def open(
        cls, settings: Settings, *, clock: Clock | None = None, provider: Provider | None = None
    ) -> Runtime:
        private_dir(settings.home, ours=False)  # a home someone chose is not chmodded
        clock = clock or SystemClock()
        db = Database(settings.db_url)
        db.migrate()
        if provider is None:
            hosts = load_inventory_file(settings.inventory) if settings.inventory else None
            provider = make_provider(
                settings.provider,
                home=settings.home,
                options=settings.provider_options,
                inventory=hosts,
            )
        engine = Engine(
            db,
            provider,
            clock=clock,
            concurrency=settings.engine_concurrency,
            lease_s=settings.lease_s,
            poll_s=settings.poll_s,
            retry=RetryPolicy(
                attempts=settings.action_retries,
                backoff_s=settings.retry_backoff_s,
                call_timeout_s=settings.provider_call_timeout_s,
            ),
            manage=settings.manage,
            manage_tick_s=settings.manage_tick_s,
            reconcile_s=settings.reconcile_interval_s,
            repair_attempts=settings.repair_attempts,
            repair_backoff_s=settings.repair_backoff_s,
            # Provider calls get the part of the stop's grace the HTTP drain does not use.
            stop_grace_s=settings.stop_grace_s * 0.4,
        )
        if settings.notifications_url:  # issue 27: notifications on the bus
            engine.notifier = BusNotifier(
                settings.notifications_url,
                topic=settings.notifications_topic,
                buffer=settings.notifications_buffer,
            )
        inventory = await engine.inventory()
        configure_placement(time_limit_s=settings.placement_time_limit_s)
        service = ClusterService(
            db,
            engine.inventory_now,
            clock,
            engine.wake,
            limits_of(settings),
            ContainerGate(settings.provider, settings.local_containers_all_projects),
        )
        with db.transaction() as conn:
            token = auth.ensure_admin(conn, clock.now())
        rt = cls(
            settings,
            db,
            provider,
            engine,
            service,
            clock,
            inventory,
            token,
            Queries(db, engine.inventory_now),
            ProfileService(db, engine.inventory_now, clock),
        )
        if token is not None:
            _write_secret(rt.token_path, token)
        return rt

    def admin_token(self) -> str | None:
        try:
            return self.token_path.read_text().strip() or None
        except OSError:
            return None

    async def close(self) -> None:
        await self.engine.stop()
        await asyncio.to_thread(self.engine.notifier.close)
        await self.provider.close()
        self.db.dispose()


def limits_of(settings: Settings) -> Limits:
    """The service's bounds: the cluster size limit and the default quotas."""
    return Limits(
        max_cluster_nodes=settings.max_cluster_nodes,
        quotas={r: int(getattr(settings, f"quota_{r}")) for r in QUOTA_RESOURCES},
        receivers_per_cluster=settings.receivers_per_cluster,
        sync_place_max_nodes=settings.sync_place_max_nodes,
    )


def _write_secret(path: Path, secret: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")

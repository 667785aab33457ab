"""Configuration: built-in defaults, then a TOML file, then `SHOAL_*` environment variables.

The embedded default needs neither file nor variables: a SQLite database and the local provider
under the user's data directory. `SHOAL_HOME` moves that directory, so several independent
Shoals can live side by side. This module imports nothing else from Shoal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)


def default_home() -> Path:
    return Path(os.environ.get("SHOAL_HOME") or user_data_dir("shoal", appauthor=False))


def _config_file() -> Path:
    explicit = os.environ.get("SHOAL_CONFIG")
    return Path(explicit) if explicit else default_home() / "shoal.toml"


class Settings(BaseSettings):
    """Every knob, with the embedded default."""

    model_config = SettingsConfigDict(env_prefix="SHOAL_", extra="forbid")

    home: Path = Field(default_factory=default_home)
    database_url: str | None = None
    """SQLAlchemy URL; default: sqlite:///<home>/shoal.db."""
    provider: str = "local"
    """local | sim"""
    provider_options: dict[str, Any] = Field(default_factory=dict)
    inventory: Path | None = None
    """An inventory file (hosts, zones, flavors, images) for the provider; default: its own."""
    engine_concurrency: int = 1000
    """Node-level actions one engine keeps in flight."""
    lease_s: float = 30.0
    """How long a claimed action stays claimed without a heartbeat."""
    poll_s: float = 0.05
    action_retries: int = 3
    """Attempts of a provider call that failed with a temporary error."""
    retry_backoff_s: float = 1.0
    provider_call_timeout_s: float = Field(default=900.0, gt=0, le=86400)
    """The time limit of one provider call of a node action (a create, a delete): a cloud or a
    runtime that hangs (podman stopped) fails the call after it, as a temporary error."""
    manage: bool = True
    """Run health checks and drift repair (one engine at a time holds the manager lease)."""
    manage_tick_s: float = 1.0
    reconcile_interval_s: float = 5.0
    """How often each cluster is compared with what the provider reports."""
    repair_attempts: int = Field(default=5, ge=1)
    """Repairs of a node that leave it in the same trouble before Shoal stops and reports it
    (cluster WARNING); the waits between them double from `repair_backoff_s` (up to 5 min)."""
    repair_backoff_s: float = Field(default=5.0, gt=0)
    stop_grace_s: float = Field(default=10.0, gt=0, le=3600)
    """How long `shoal server` may take to exit after SIGTERM, whatever the load: streams and
    long polls end at once, other requests and provider calls get a share, then it exits."""
    bind: str = "127.0.0.1"
    port: int = 8470
    max_body_bytes: int = 2 * 1024 * 1024
    header_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    """How long `shoal server` waits for a request's headers before closing the connection."""
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    """How long a request body may take to arrive once the app reads it; past it, 408."""
    url: str | None = None
    """Talk to this Shoal server instead of running embedded (CLI)."""
    agent_url: str | None = None
    """Where servers' in-guest agents reach this Shoal for their software deployments
    (metadata and signals); default: `shoal server`'s agents' listener (`agent_port`)."""
    agent_port: int = Field(default=0, ge=0, le=65535)
    """Where `shoal server` listens for agents, beside its API, on the same address: only the
    agents' routes answer there (issue 39), and it is all a local node may reach of Shoal.
    0: a free port. Not opened when `agent_url` is set (the operator's own route to Shoal)."""
    local_containers_all_projects: bool = False
    """Let every project run docker-compose/kubelet deployments on `local`, not only admins: a
    node's container API is root-equivalent on this host (docs/containers.md)."""
    token: str | None = None
    auth: Literal["shoal", "keystone"] = "shoal"
    """shoal: Shoal's own bearer tokens; keystone: X-Auth-Token validated by Keystone."""
    keystone_url: str = "http://127.0.0.1:5000/v3"
    """Keystone's identity endpoint (with or without /v3)."""
    keystone_user: str = "senlin"
    """The service user that validates tokens (needs the `service` or `admin` role)."""
    keystone_password: str = "secretservice"
    keystone_project: str = "service"
    keystone_domain: str = "Default"
    keystone_cache_s: float = 60.0
    """How long a validated token is trusted without asking Keystone again."""
    keystone_timeout_s: float = Field(default=10.0, gt=0, le=600)
    """How long one token validation may wait for Keystone before the call is refused (503 with
    Retry-After, as for a Keystone that is down): a busy Keystone (the conformance run on a
    loaded machine) needs longer."""
    placement_time_limit_s: float = Field(default=10.0, gt=0, le=3600)
    """How long placement's exact method may look for a placement or a proof that none exists,
    past which the answer is "undecided" (HTTP 409 `undecided`, `shoal plan` exit 1)."""

    # -- limits and quotas (issue 9) --
    max_cluster_nodes: int = Field(default=10_000, ge=1)
    """The most nodes one cluster may declare; checked before any per-node work."""
    topology_max_drawn: int = Field(default=2_000, ge=0)
    """The dashboard's topology draws nodes one by one up to this many; above, it sends each
    host's counts per status, made in SQL (issue 23)."""
    topology_max_hosts: int = Field(default=1_000, ge=1)
    """A topology of counts (above `topology_max_drawn` nodes) lists hosts up to this many;
    above, each zone is one line of totals (hosts, failed hosts, capacity, use, nodes)."""
    sync_place_max_nodes: int = Field(default=1_000, ge=0)
    """A new cluster declaring at most this many nodes is placed in the request (unplaceable:
    409 at once); a larger one is placed by its create action, which fails (and removes the
    cluster) with the reasons if it cannot be placed. Keeps a 100,000-node POST fast."""
    quota_clusters: int = Field(default=100, ge=-1)
    """Default per-project quotas (-1: unlimited); an admin overrides them per project. Finite
    by default, so one tenant cannot fill the server; the admin's own project is not held to
    these defaults (only to its overrides)."""
    quota_nodes: int = Field(default=1000, ge=-1)
    quota_vcpus: int = Field(default=-1, ge=-1)
    quota_ram_mb: int = Field(default=-1, ge=-1)
    quota_volume_gb: int = Field(default=-1, ge=-1)
    max_streams_per_token: int = Field(default=10, ge=1)
    """Event streams (`GET /v1/events/stream`) one token may hold open at once; past it, 429."""
    max_streams_per_project: int = Field(default=50, ge=1)
    max_long_polls_per_token: int = Field(default=10, ge=1)
    """Long polls (`GET /v1/events?wait=...`) one token may hold at once; past it, 429."""
    max_long_polls_per_project: int = Field(default=50, ge=1)
    receivers_per_cluster: int = Field(default=100, ge=1)
    """Receivers (webhooks) one cluster may have; past it, 409 naming the limit."""
    token_ttl_s: Annotated[float, Field(ge=0)] = 90 * 86400.0
    """How long a new project token lives unless its creator says otherwise; 0: forever."""
    cors_origins: list[str] = Field(default_factory=list)
    """Browser origins allowed to call the API (CORS), e.g. ["https://console.example"]."""

    # -- observability (issue 27, docs/observability.md) --
    metrics_bind: str | None = None
    """Also serve /metrics without authentication on this HOST:PORT (e.g. "127.0.0.1:9470");
    the API's own /metrics always asks for the admin token."""
    metrics_project_label: bool = False
    """Label node gauges by project too (one series per project: mind the cardinality)."""
    notifications_url: str | None = None
    """oslo.messaging transport URL for notifications on the bus (e.g.
    "rabbit://guest:guest@127.0.0.1:5672/"); unset: no notifications."""
    notifications_topic: str = "versioned_notifications"
    notifications_buffer: int = Field(default=10_000, ge=1)
    """Notifications kept while the bus is slow or gone; past it they are dropped and counted."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=_config_file()),
        )

    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'shoal.db'}"

"""The openstack provider's options (`provider_options` in shoal.toml): how it places (as an
admin pinning hosts, or as a tenant), where servers attach, and its time limits."""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("auto", "admin", "tenant")
PINS = ("force", "host")


@dataclass(frozen=True, slots=True)
class OpenStackOptions:
    mode: str = "auto"
    """admin (pin hosts), tenant (server groups), auto (admin when the hypervisor API answers)."""
    pin: str = "force"
    """force: `availability_zone: zone:host`; host: microversion 2.74's `host`."""
    network: str = "auto"
    """Where a server with no networks of its own attaches: auto, none, or a network's id."""
    poll_interval_s: float = 1.0
    boot_timeout_s: float = 600.0
    request_timeout_s: float = 60.0
    concurrency: int = 16
    slots_per_zone: int = 32
    cpu_allocation_ratio: float = 1.0
    ram_allocation_ratio: float = 1.0
    agent_poll_s: float = 30.0
    """The most the agents of a server created with a metadata URL wait between polls."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(
                f"openstack option mode: {self.mode!r} is not one of {', '.join(MODES)}"
            )
        if self.pin not in PINS:
            raise ValueError(f"openstack option pin: {self.pin!r} is not one of {', '.join(PINS)}")

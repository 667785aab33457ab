"""The local provider's options (`provider_options` in shoal.toml), and the confinement they
ask for: the sandbox (issue 29) and each node's own network (issue 39).

`isolation`: "auto" (the default) gives each node its own network when Shoal can (root, `ip`,
`nsenter`, `nft`: netns.py) and otherwise runs nodes on the host's network, saying why; "netns"
insists (a Shoal that cannot refuses to start); "off" shares the host's network on purpose.
Either way a Shoal whose nodes are not both sandboxed and isolated serves its admin only
(api/auth.py): such a node can reach or read what would let it take the server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from shoal.providers.local import netns
from shoal.providers.local.agents import AgentInstall
from shoal.providers.local.confinement import Confinement
from shoal.providers.local.isolation import NodeNetworks
from shoal.providers.local.networking import LocalNetworking
from shoal.providers.local.records import RecordStore
from shoal.providers.local.sandbox import NO_BINDS, Binds, Sandbox

log = logging.getLogger("shoal.local")

ISOLATION = ("auto", "netns", "off")


class IsolationUnavailableError(ValueError):
    """`isolation = "netns"` on a machine where Shoal cannot make namespaces (refused at
    start, saying why)."""


@dataclass(frozen=True, slots=True)
class LocalOptions:
    port: int = 8080
    """The port every server listens on, at its own address."""
    boot_timeout_s: float = 15.0
    stop_grace_s: float = 3.0
    agent_poll_s: float = 5.0
    """How long a server's agents wait between polls of its metadata at most."""
    agent_install: AgentInstall | None = None
    sandbox: str = "bwrap"
    isolation: str = "auto"
    binds: Binds = field(default=NO_BINDS)
    """Paths every node sees besides its own workdir (and its attached volumes)."""
    containers: str = "auto"
    """A container runtime beside every server's agents (noderuntime.py): "auto" when podman
    is installed, "on" (a missing podman is logged as an error), or "off"."""
    replicas: str = "podman"

    def __post_init__(self) -> None:
        if self.replicas not in ("podman", "agents"):
            raise ValueError(
                f"local option replicas must be podman or agents, not {self.replicas!r}"
            )
        if self.isolation not in ISOLATION:
            raise ValueError(
                f"local option isolation must be auto, netns or off, not {self.isolation!r}"
            )


def confinement_for(
    o: LocalOptions, home: Path, records: RecordStore, networking: LocalNetworking
) -> Confinement:
    """The sandbox and the node networks `o` asks for; raises `SandboxUnavailableError` or
    `IsolationUnavailableError` when one is insisted on and cannot be had."""
    sandbox = Sandbox.find(o.sandbox)
    reasons: list[str] = []
    if sandbox is None:
        reasons.append('local nodes run unsandboxed (local option sandbox = "off")')
    networks = None
    why = 'local option isolation = "off"' if o.isolation == "off" else netns.usable()
    if not why:
        networks = NodeNetworks(home, records, networking.vips_of)
        networks.sweep()
    elif o.isolation == "netns":
        raise IsolationUnavailableError(
            f'local nodes get networks of their own (isolation = "netns"), and {why}'
        )
    else:
        reasons.append(f"local nodes share the host's network: {why}")
        log.warning("%s; this Shoal serves its admin only", reasons[-1])
    return Confinement(sandbox, o.binds, networks, tuple(reasons))

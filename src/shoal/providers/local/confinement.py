"""How a local node's programs are confined: its files (bubblewrap: sandbox.py) and its network
(its own namespace: isolation.py). Every program Shoal starts for a node (the node itself, its
agent chain, its container runtime) is wrapped here, so none is started outside either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from shoal.providers.capabilities import ConfinementReport
from shoal.providers.local.isolation import NodeNetworks
from shoal.providers.local.records import ServerRecord
from shoal.providers.local.sandbox import Binds, Sandbox, env_for_node


class Confinement:
    def __init__(
        self,
        sandbox: Sandbox | None,
        binds: Binds,
        networks: NodeNetworks | None,
        reasons: tuple[str, ...] = (),
    ) -> None:
        self.sandbox = sandbox
        """bwrap; None: the sandbox is off."""
        self.binds = binds
        """Paths every node sees besides its own workdir (and its attached volumes)."""
        self.networks = networks
        """Each node's own network; None: nodes share the host's."""
        self.report = ConfinementReport(sandbox is not None, networks is not None, reasons)

    def node(self, argv: Sequence[str], record: ServerRecord, extra: Binds) -> list[str]:
        """The node's own program in its sandbox (with `extra` besides the provider's binds)
        and network. It outlives the Shoal that started it (issue 39)."""
        return self._wrap(argv, record, extra, None)

    def chain(
        self, argv: Sequence[str], record: ServerRecord, extra: Binds, chdir: Path
    ) -> list[str]:
        """The node's agent chain, started in `chdir`: as confined as the node, and dying
        with the watcher that ties it to the node (agentwatch.py)."""
        return self._wrap(argv, record, extra, chdir)

    def _wrap(
        self, argv: Sequence[str], record: ServerRecord, extra: Binds, chdir: Path | None
    ) -> list[str]:
        out = list(argv)
        if self.sandbox is not None:
            binds = Binds(
                (*self.binds.read_only, *extra.read_only),
                (*self.binds.read_write, *extra.read_write),
            )
            out = self.sandbox.wrap(
                out,
                workdir=Path(record.workdir),
                binds=binds,
                chdir=chdir,
                die_with_parent=chdir is not None,
            )
        return self.in_network(out, record)

    def in_network(self, argv: Sequence[str], record: ServerRecord) -> list[str]:
        """`argv` run in the node's own network (as it is when it has none)."""
        link = self.networks.link(record) if self.networks is not None else None
        return link.enter(argv) if link is not None else list(argv)

    def network_mode(self, record: ServerRecord) -> str:
        """podman's `--network` for the node's containers: its namespace, else the host's."""
        link = self.networks.link(record) if self.networks is not None else None
        return f"ns:{link.path}" if link is not None else "host"

    def env(self, env: Mapping[str, str], workdir: Path) -> dict[str, str]:
        """The environment a node's program starts with (the server's own stays out of a
        sandbox)."""
        return env_for_node(env, workdir) if self.sandbox is not None else dict(env)

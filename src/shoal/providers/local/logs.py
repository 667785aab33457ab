"""Node logs Shoal can read on `local` (`shoal logs NODE`, `GET /v1/nodes/{id}/log`): each
server's program writes `node.log` in its workdir (the `NodeLogs` capability)."""

from __future__ import annotations

from pathlib import Path

from shoal.files import read_tail_beneath
from shoal.providers.local.launcher import LOG_NAME


class LocalNodeLogs:
    def __init__(self, nodes: Path) -> None:
        self.nodes = nodes
        """`home/nodes`."""

    def node_log(self, provider_id: str, max_bytes: int) -> str | None:
        """The end of a local server's log; None if Shoal made no such server here.

        The id is a provider id Shoal recorded, never a path a caller chose: only `srv-<hex>`
        ids are looked up, so no request can read outside the nodes directory; and the log is
        opened without following a link (the node may have replaced it with one: None then).
        """
        if not provider_id.startswith("srv-") or not provider_id[4:].isalnum():
            return None
        data = read_tail_beneath(self.nodes / provider_id, LOG_NAME, max_bytes)
        return None if data is None else data.decode(errors="replace")

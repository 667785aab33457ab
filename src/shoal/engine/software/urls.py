"""The URLs a server's agents use: its metadata (polled by os-collect-config) and each run's
signal (POSTed by heat-config-notify), each carrying its own secret (`secrets.py`)."""

from __future__ import annotations

from dataclasses import dataclass

METADATA_PATH = "/v1/software/servers/{node_id}/metadata"
SIGNAL_PATH = "/v1/software/signals/{action_id}"


@dataclass(frozen=True, slots=True)
class Urls:
    """Where agents reach this Shoal (the API's base URL as the nodes see it)."""

    base: str

    def metadata(self, node_id: str, secret: str) -> str:
        return f"{self.base.rstrip('/')}{METADATA_PATH.format(node_id=node_id)}?token={secret}"

    def signal(self, action_id: str, secret: str) -> str:
        return f"{self.base.rstrip('/')}{SIGNAL_PATH.format(action_id=action_id)}?token={secret}"

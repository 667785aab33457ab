"""Store outcomes callers act on: a name already taken, a cluster busy with another action."""

from __future__ import annotations


class StoreError(Exception):
    pass


class NameTaken(StoreError):
    def __init__(self, what: str, name: str) -> None:
        super().__init__(f"a {what} named {name!r} already exists")
        self.what = what
        self.name = name


class ClusterBusy(StoreError):
    def __init__(self, cluster: str, action_id: str | None) -> None:
        super().__init__(
            f"cluster {cluster} is busy with action {action_id}; try again when it has finished"
        )
        self.cluster = cluster
        self.action_id = action_id

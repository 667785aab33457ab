"""The engine: runs persisted actions, cluster-level ones by planning, node-level ones by
calling the provider, with claims, leases and heartbeats so several processes can share one
database and an action whose engine died is taken up again."""

from shoal.engine.runtime import Engine

__all__ = ["Engine"]

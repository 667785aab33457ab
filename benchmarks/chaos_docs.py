"""The documents `benchmarks/chaos_parts.py` moves its clusters between (issue 39, item 4).

Each is a small cluster on `sim` with the new parts in it: node groups, software deployments
(simulated runs), workloads (simulated containers on the cluster's servers) and a load balancer
whose pool follows a node group. `shape(name, 0)` and `shape(name, 1)` differ in every part at
once, so applying one to a cluster made from the other scales, adds and removes a group,
changes a deployment's config and adds one, re-images a workload and adds one, and moves the
balancer's pool to another group.
"""

from __future__ import annotations

from typing import Any

SERVER = {"type": "server", "flavor": "m1.small", "image": "cirros"}
NETWORKS = [{"name": "app", "cidr": "10.10.0.0/24"}]


def _workload(image: str, replicas: int, *, surge: int = 0) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "containers": [
            {
                "name": "main",
                "image": image,
                "ports": [8080],
                "resources": {"cpu": 0.1, "memory_mb": 32},
            }
        ],
        "update": {"max_unavailable": 1, "max_surge": surge},
    }


def _balancer(pool_over: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "front",
            "network": "app",
            "listeners": [{"port": 80, "pool": "web"}],
            "pools": [{"name": "web", "members": pool_over, "port": 8080}],
        }
    ]


def shape(name: str, which: int) -> dict[str, Any]:
    """Document A (`which` 0) or B (1) of cluster `name` (the `transitions` scenario)."""
    if which == 0:
        groups = [
            {"name": "app", "profile": SERVER, "count": 2, "max": 6},
            {"name": "web", "profile": SERVER, "count": 2, "max": 6},
        ]
        software = {
            "configs": {"setup": {"group": "script", "config": "echo a"}},
            "deployments": {"setup": {"config": "setup", "target": "app"}},
        }
        workloads = {"api": _workload("api:1", 2)}
        pool = "web"
    else:
        groups = [
            {"name": "app", "profile": SERVER, "count": 3, "max": 6},
            {"name": "cache", "profile": SERVER, "count": 1, "max": 6},
        ]
        software = {
            "configs": {
                "setup": {"group": "script", "config": "echo b"},
                "warm": {"group": "script", "config": "echo warm"},
            },
            "deployments": {
                "setup": {"config": "setup", "target": "app"},
                "warm": {"config": "warm", "target": "cache"},
            },
        }
        workloads = {"api": _workload("api:2", 3), "worker": _workload("worker:1", 1)}
        pool = "app"
    return {
        "name": name,
        "node_groups": groups,
        "software": software,
        "workloads": workloads,
        "networks": NETWORKS,
        "load_balancers": _balancer(pool),
    }


def rollout(name: str, version: int, replicas: int) -> dict[str, Any]:
    """A cluster whose workload `api` runs image `api:<version>` (the `rollouts` scenario): a
    new version re-images every replica, in batches with a surge (a replica binds its port on
    its server's address: one per server, and a server spare for the surge)."""
    return {
        "name": name,
        "node_groups": [{"name": "app", "profile": SERVER, "count": replicas + 1, "max": 8}],
        "workloads": {"api": _workload(f"api:{version}", replicas, surge=1)},
    }


def balanced(name: str, web: int) -> dict[str, Any]:
    """A cluster of `web` servers behind a balancer (the `balancers` scenario): a new count
    changes the balancer's members."""
    return {
        "name": name,
        "node_groups": [{"name": "web", "profile": SERVER, "count": web, "min": 1, "max": 8}],
        "networks": NETWORKS,
        "load_balancers": _balancer("web"),
    }

"""Store records built in memory for tests that need a node or cluster row without a database:
one place holds every field, and a test names only what it is about."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from shoal.model.enums import ClusterStatus, NodeKind, NodeStatus
from shoal.store.records import ClusterRecord, NodeRecord


def cluster_record(cid: str = "c1", **fields: Any) -> ClusterRecord:
    """An ACTIVE native cluster `svc` of project `p`, its fields overridden by `fields`."""
    base = ClusterRecord(
        id=cid,
        project_id="p",
        name="svc",
        status=ClusterStatus.ACTIVE,
        status_reason="",
        document={},
        source_format="native",
        generation=1,
        lock_action_id=None,
        created_at=0.0,
        updated_at=0.0,
        deleted_at=None,
        scaled_at={},
    )
    return replace(base, **fields)


def node_record(name: str, **fields: Any) -> NodeRecord:
    """An ACTIVE server `name` of group `web` in cluster `c1`, its fields overridden by
    `fields`."""
    base = NodeRecord(
        id=f"id-{name}",
        cluster_id="c1",
        project_id="p",
        name=name,
        kind=NodeKind.SERVER,
        group_name="web",
        part=None,
        replica=1,
        status=NodeStatus.ACTIVE,
        status_reason="",
        host="h",
        zone="z",
        address=None,
        provider_id=f"srv-{name}",
        profile={},
        vcpus=1,
        ram_mb=1024,
        disk_gb=1,
        volume_gb=0,
        attach_to=None,
        health="UNKNOWN",
        health_reason="",
        checked_at=None,
        created_at=0.0,
        updated_at=0.0,
        deleted_at=None,
    )
    return replace(base, **fields)

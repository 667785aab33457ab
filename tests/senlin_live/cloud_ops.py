"""What the live tests do through openstacksdk (as a Senlin user would) and read from Nova
directly (as its operator would), against real Senlin or against Shoal's /clustering alike."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openstack
from openstack.connection import Connection

from tests.keystone.conftest import USER_PASSWORD, Keystone

ACTION_S = 600.0
"""Generous: one Senlin action boots servers through two eventlet services and a trust."""
TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
NOVA_HEADERS = {"OpenStack-API-Version": "compute 2.74"}

SERVER_SPEC: dict[str, Any] = {
    "type": "os.nova.server",
    "version": "1.0",
    "properties": {"flavor": "m1.tiny", "image": "cirros", "networks": []},
}


def connect(keystone: Keystone, clustering: str) -> Connection:
    """alice of project alpha, the clustering endpoint overridden (Senlin's or Shoal's), at
    Senlin 16's newest microversion as python-senlinclient asks for it (replace-nodes and
    other calls need more than 1.0)."""
    return openstack.connect(
        auth_url=keystone.url,
        username="alice",
        password=USER_PASSWORD,
        project_name="alpha",
        user_domain_id="default",
        project_domain_id="default",
        clustering_endpoint_override=clustering,
        clustering_default_microversion="1.14",
        api_timeout=120,
    )


def action_id(location: str | None) -> str:
    assert location, "no Location for the action"
    return location.rstrip("/").rsplit("/", 1)[-1]


def wait_action(conn: Connection, location_or_id: str) -> Any:
    """The action once it has finished (any terminal status)."""
    aid = action_id(location_or_id)
    deadline = time.monotonic() + ACTION_S
    while True:
        action = conn.clustering.get_action(aid)
        if action.status in TERMINAL:
            return action
        assert time.monotonic() < deadline, (
            f"action {aid} ({action.action} on {action.target_id}) still {action.status}: "
            f"reason {action.status_reason!r}, depends on {action.depends_on}"
        )
        time.sleep(0.5)


def done(conn: Connection, answer: Any) -> Any:
    """Wait for the action an sdk call answered with (a dict with `action`, or a resource
    whose `location` names it) and insist it succeeded."""
    if isinstance(answer, dict):
        ref = answer.get("action") or answer.get("location")
    else:
        ref = getattr(answer, "location", None)
        ref = ref if isinstance(ref, str) else None
    assert isinstance(ref, str), answer
    action = wait_action(conn, ref)
    assert action.status == "SUCCEEDED", (action.action, action.status, action.status_reason)
    return action


def wait_cluster(conn: Connection, cluster_id: str) -> Any:
    deadline = time.monotonic() + ACTION_S
    while True:
        cluster = conn.clustering.get_cluster(cluster_id)
        if cluster.status not in ("INIT", "CREATING", "RESIZING", "UPDATING", "CHECKING"):
            return cluster
        if time.monotonic() >= deadline:
            nodes = [
                (n.id, n.status, n.status_reason, n.physical_id)
                for n in conn.clustering.nodes(cluster_id=cluster_id)
            ]
            raise AssertionError(
                f"cluster {cluster_id} still {cluster.status}: reason {cluster.status_reason!r}, "
                f"nodes {nodes}, servers {_servers(conn, [n[3] for n in nodes])}"
            )
        time.sleep(0.5)


def wait_node(conn: Connection, node_id: str) -> Any:
    deadline = time.monotonic() + ACTION_S
    while True:
        node = conn.clustering.get_node(node_id)
        if node.status not in ("INIT", "CREATING", "UPDATING", "CHECKING", "RECOVERING"):
            return node
        if time.monotonic() >= deadline:
            raise AssertionError(f"node {node_id} still {node.status}: {_story(conn, node)}")
        time.sleep(0.5)


def _story(conn: Connection, node: Any) -> str:
    """What a stuck node's endpoint says about it: its reason and its actions (a CI failure
    must say where the node stopped, not only that it did)."""
    actions = [
        (a.action, a.status, a.status_reason, a.created_at, a.updated_at)
        for a in conn.clustering.actions(target=node.id)
    ]
    return (
        f"reason {node.status_reason!r}, physical {node.physical_id!r}, actions {actions}, "
        f"servers {_servers(conn, [node.physical_id])}"
    )


def _servers(conn: Connection, server_ids: list[str | None]) -> list[tuple[Any, ...]] | str:
    """What Nova says of the servers a stuck node or cluster has, through the catalog's
    `compute` (the harness): whether Nova's build or Senlin's or Shoal's wait is what stalled."""
    try:
        found = []
        for server_id in filter(None, server_ids):
            server = conn.compute.get_server(server_id)
            found.append(
                (server.id, server.status, server.task_state, server.vm_state, server.updated_at)
            )
        return found
    except Exception as e:  # a diagnostic must not hide the failure it explains
        return f"unreadable: {e!r}"


class Nova:
    """The Nova harness's own API (its admin), for what it holds and to stop a server."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, headers=NOVA_HEADERS, timeout=60)

    def servers(self) -> dict[str, tuple[str, str, str]]:
        """Every server: id -> (status, host, last update)."""
        found = self.http.get("/servers/detail").raise_for_status().json()["servers"]
        return {s["id"]: (s["status"], s["OS-EXT-SRV-ATTR:host"], s["updated"]) for s in found}

    def stop(self, server_id: str) -> None:
        self.http.post(f"/servers/{server_id}/action", json={"os-stop": None}).raise_for_status()
        deadline = time.monotonic() + ACTION_S
        while self.servers()[server_id][0] != "SHUTOFF":
            assert time.monotonic() < deadline, f"server {server_id} did not stop"
            time.sleep(0.5)

    def close(self) -> None:
        self.http.close()

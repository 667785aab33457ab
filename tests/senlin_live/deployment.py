"""A Senlin deployment of the shapes issue 28 names, made by real Senlin through openstacksdk:
a cluster with policies attached and a webhook receiver, a cluster with a node in ERROR (its
server stopped behind Senlin's back, then `cluster check`), and a standalone node."""

from __future__ import annotations

from dataclasses import dataclass, field

from openstack.connection import Connection

from tests.senlin_live.cloud_ops import SERVER_SPEC, Nova, done, wait_cluster, wait_node

DELETION = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {"criteria": "OLDEST_FIRST"},
}
SCALE_OUT = {
    "type": "senlin.policy.scaling",
    "version": "1.0",
    "properties": {
        "event": "CLUSTER_SCALE_OUT",
        "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 1},
    },
}


@dataclass
class Made:
    """Ids of what Senlin made, by name, and Senlin's node -> server binding."""

    clusters: dict[str, str] = field(default_factory=dict)
    receivers: dict[str, str] = field(default_factory=dict)
    webhook: str = ""
    """The receiver's alarm URL as Senlin handed it out."""
    servers: dict[str, str] = field(default_factory=dict)
    """Senlin node id -> Nova server id (physical_id)."""
    error_node: str = ""
    loner: str = ""


def make_deployment(conn: Connection, nova: Nova) -> Made:
    out = Made()
    cc = conn.clustering
    profile = cc.create_profile(name="server", spec=SERVER_SPEC)

    web = cc.create_cluster(
        name="web", profile_id=profile.id, desired_capacity=2, min_size=1, max_size=4
    )
    db = cc.create_cluster(name="db", profile_id=profile.id, desired_capacity=2, min_size=0)
    loner = cc.create_node(name="loner", profile_id=profile.id)
    out.clusters = {"web": web.id, "db": db.id}
    out.loner = loner.id
    for cid in out.clusters.values():
        assert wait_cluster(conn, cid).status == "ACTIVE"
    assert wait_node(conn, loner.id).status == "ACTIVE"

    for name, spec in (("oldest-first", DELETION), ("out-by-one", SCALE_OUT)):
        policy = cc.create_policy(name=name, spec=spec)
        done(conn, cc.attach_policy_to_cluster(web.id, policy.id, enabled=True))
    receiver = cc.create_receiver(
        name="web-out",
        cluster_id=web.id,
        action="CLUSTER_SCALE_OUT",
        type="webhook",
        params={"count": "1"},
    )
    out.receivers["web-out"] = receiver.id
    out.webhook = receiver.channel["alarm_url"]

    # A node in ERROR: its server stopped behind Senlin's back, found by Senlin's own check.
    db_nodes = sorted(cc.nodes(cluster_id=db.id), key=lambda n: n.index)
    nova.stop(db_nodes[0].physical_id)
    out.error_node = db_nodes[0].id
    done(conn, cc.check_cluster(db.id))
    assert cc.get_node(out.error_node).status == "ERROR"

    for node in cc.nodes():
        out.servers[node.id] = node.physical_id
    return out

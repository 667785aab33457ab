"""A Senlin deployment of different shapes, written through Senlin's DB API over servers that
exist in Shoal's simulated cloud (as Senlin's engine would have left them)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import Provider, ServerRequest
from tests.senlin_import.harness import SenlinDb

USER, PROJECT = "u-senlin", "p-senlin"

NOVA = {
    "type": "os.nova.server",
    "version": "1.0",
    "properties": {"flavor": "m1.tiny", "image": "cirros", "networks": [{"network": "private"}]},
}
STACK = {
    "type": "os.heat.stack",
    "version": "1.0",
    "properties": {
        "template": {
            "heat_template_version": "2016-10-14",
            "resources": {
                "web": {
                    "type": "OS::Nova::Server",
                    "properties": {"flavor": "m1.tiny", "image": "cirros"},
                }
            },
        }
    },
}
POLICIES: dict[str, dict[str, Any]] = {
    "deletion": {
        "type": "senlin.policy.deletion",
        "version": "1.1",
        "properties": {"criteria": "OLDEST_FIRST"},
    },
    "scaling": {
        "type": "senlin.policy.scaling",
        "version": "1.0",
        "properties": {
            "event": "CLUSTER_SCALE_OUT",
            "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 1},
        },
    },
    "health": {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {"detection_modes": [{"type": "NODE_STATUS_POLLING"}], "interval": 60},
            "recovery": {"actions": [{"name": "RECREATE"}]},
        },
    },
    "affinity": {
        "type": "senlin.policy.affinity",
        "version": "1.0",
        "properties": {"servergroup": {"policies": "anti-affinity"}},
    },
    "zone_placement": {
        "type": "senlin.policy.zone_placement",
        "version": "1.0",
        "properties": {"zones": [{"name": "az1", "weight": 100}]},
    },
    "loadbalance": {
        "type": "senlin.policy.loadbalance",
        "version": "1.1",
        "properties": {
            "pool": {"protocol": "HTTP", "protocol_port": 80, "subnet": "private"},
            "vip": {"subnet": "public", "protocol": "HTTP", "protocol_port": 80},
        },
    },
}


def new_id() -> str:
    return str(uuid.uuid4())


@dataclass
class Deployment:
    """What was written, by name, for the assertions."""

    profiles: dict[str, str] = field(default_factory=dict)
    policies: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)
    servers: dict[str, str] = field(default_factory=dict)
    """Senlin node name -> the server id in the cloud."""
    receivers: dict[str, str] = field(default_factory=dict)


class Writer:
    def __init__(self, db: SenlinDb, provider: Provider, inventory: Inventory) -> None:
        self.db, self.provider, self.inventory = db, provider, inventory
        self.out = Deployment()

    def profile(self, name: str, spec: dict[str, Any]) -> str:
        pid = self.out.profiles[name] = new_id()
        type_name = f"{spec['type']}-{spec['version']}"
        self.db.call(
            "profile_create",
            {
                "id": pid,
                "name": name,
                "type": type_name,
                "spec": spec,
                "user": USER,
                "project": PROJECT,
                "meta_data": {},
                "context": {},
            },
        )
        return pid

    def policy(self, name: str, kind: str) -> str:
        spec = POLICIES[kind]
        pid = self.out.policies[name] = new_id()
        self.db.call(
            "policy_create",
            {
                "id": pid,
                "name": name,
                "type": f"{spec['type']}-{spec['version']}",
                "spec": spec,
                "user": USER,
                "project": PROJECT,
                "data": {},
                "level": 0,
                "cooldown": 0,
            },
        )
        return pid

    def cluster(
        self,
        name: str,
        profile: str,
        *,
        desired: int,
        min_size: int = 0,
        max_size: int = -1,
        metadata: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> str:
        cid = self.out.clusters[name] = new_id()
        self.db.call(
            "cluster_create",
            {
                "id": cid,
                "name": name,
                "profile_id": self.out.profiles[profile],
                "user": USER,
                "project": PROJECT,
                "min_size": min_size,
                "max_size": max_size,
                "desired_capacity": desired,
                "next_index": 1,
                "timeout": 3600,
                "status": "ACTIVE",
                "status_reason": "Cluster creation succeeded.",
                "meta_data": metadata or {},
                "data": {},
                "config": config or {},
                "dependents": {},
            },
        )
        return cid

    async def server(self, key: str, cluster: str, host: str) -> str:
        zone = next(h.zone for h in self.inventory.hosts if h.name == host)
        profile = ServerProfile(self.inventory.flavor("m1.tiny"), self.inventory.image("cirros"))
        made = await self.provider.create_server(
            ServerRequest(key=key, name=key, cluster=cluster, host=host, zone=zone, profile=profile)
        )
        return made.id

    async def node(
        self,
        name: str,
        cluster: str | None,
        profile: str,
        index: int,
        *,
        host: str | None = "az1-host1",
        status: str = "ACTIVE",
        physical_id: str | None = None,
    ) -> str:
        nid = self.out.nodes[name] = new_id()
        cid = self.out.clusters[cluster] if cluster else ""
        if physical_id is None and host is not None:
            # Senlin's servers carry Senlin's metadata, not Shoal's cluster tag.
            physical_id = await self.server(nid, "senlin-made", host)
        if physical_id:
            self.out.servers[name] = physical_id
        self.db.call(
            "node_create",
            {
                "id": nid,
                "name": name,
                "physical_id": physical_id,
                "cluster_id": cid,
                "profile_id": self.out.profiles[profile],
                "user": USER,
                "project": PROJECT,
                "index": index,
                "role": "",
                "status": status,
                "status_reason": "Creation succeeded" if status == "ACTIVE" else "Boot failed",
                "meta_data": {"owner": "ops"},
                "data": {},
                "dependents": {},
                "tainted": False,
            },
        )
        return nid

    def attach(self, cluster: str, policy: str, priority: int) -> None:
        self.db.call(
            "cluster_policy_attach",
            self.out.clusters[cluster],
            self.out.policies[policy],
            {"enabled": True, "priority": priority, "data": {}},
        )

    def receiver(
        self, name: str, cluster: str, action: str, params: dict[str, Any], kind: str = "webhook"
    ) -> str:
        rid = self.out.receivers[name] = new_id()
        self.db.call(
            "receiver_create",
            {
                "id": rid,
                "name": name,
                "type": kind,
                "user": USER,
                "project": PROJECT,
                "cluster_id": self.out.clusters[cluster],
                "action": action,
                "params": params,
                "actor": {"trust_id": "t-1"},
                "channel": {"alarm_url": f"http://senlin:8777/v1/webhooks/{rid}/trigger?V=1"},
            },
        )
        return rid


async def write_deployment(db: SenlinDb, provider: Provider, inventory: Inventory) -> Deployment:
    """The shapes the issue names: nodes with policies and receivers, a node in ERROR, a missing
    server, a standalone node, a cluster_lock row, an unfinished action, a heat stack, trusts."""
    w = Writer(db, provider, inventory)
    w.profile("nova", NOVA)
    w.profile("stack", STACK)
    for kind in POLICIES:
        w.policy(f"{kind}-p", kind)

    w.cluster(
        "web",
        "nova",
        desired=3,
        min_size=1,
        max_size=6,
        metadata={"tier": "web", "replicas": 3},
        config={"node.name.format": "web-$3I"},
    )
    # Two servers on one host: Nova broke the anti-affinity group before the import.
    await w.node("web-001", "web", "nova", 1, host="az1-host1")
    await w.node("web-002", "web", "nova", 2, host="az1-host1")
    await w.node("web-003", "web", "nova", 3, host="az1-host2")
    for prio, kind in enumerate(POLICIES):
        w.attach("web", f"{kind}-p", 10 * (prio + 1))
    w.receiver("web-out", "web", "CLUSTER_SCALE_OUT", {"count": "1"})
    w.receiver("web-msg", "web", "CLUSTER_SCALE_OUT", {}, kind="message")

    w.cluster("db", "nova", desired=3, min_size=0, max_size=-1)
    await w.node("db-1", "db", "nova", 1, host="az2-host1")
    await w.node("db-2", "db", "nova", 2, host="az2-host2", status="ERROR")
    await w.node("db-3", "db", "nova", 3, host=None, physical_id=new_id())  # gone from Nova
    w.receiver(
        "db-resize",
        "db",
        "CLUSTER_RESIZE",
        {"adjustment_type": "CHANGE_IN_CAPACITY", "number": "1"},
    )

    w.cluster("locked", "nova", desired=1)
    await w.node("locked-1", "locked", "nova", 1, host="az1-host3")
    db.call("cluster_lock_acquire", w.out.clusters["locked"], new_id(), -1)

    acting = w.cluster("acting", "nova", desired=1)
    await w.node("acting-1", "acting", "nova", 1, host="az2-host3")
    db.call(
        "action_create",
        {
            "id": new_id(),
            "name": "cluster_scale_out_1",
            "cluster_id": acting,
            "target": acting,
            "action": "CLUSTER_SCALE_OUT",
            "cause": "RPC Request",
            "owner": None,
            "status": "READY",
            "status_reason": "",
            "inputs": {},
            "outputs": {},
            "data": {},
            "context": {},
            "user": USER,
            "project": PROJECT,
            "interval": -1,
            "timeout": 3600,
        },
    )

    w.cluster("stacks", "stack", desired=1)
    await w.node("stacks-1", "stacks", "stack", 1, host=None, physical_id=new_id())

    await w.node("loner", None, "nova", -1, host="az2-host3")
    db.call(
        "receiver_create",
        {
            "id": new_id(),
            "name": "queue",
            "type": "message",
            "user": USER,
            "project": PROJECT,
            "cluster_id": None,
            "action": None,
            "params": {},
            "actor": {},
            "channel": {},
        },
    )
    db.call(
        "cred_create",
        {"user": USER, "project": PROJECT, "cred": {"openstack": {"trust": "t-1"}}, "data": {}},
    )
    db.flush()
    return w.out

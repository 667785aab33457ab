"""`senlin.policy.loadbalance-1.1` and `senlin.policy.region_placement-1.0` through the façade:
served as types, attached to a cluster, and (loadbalance) written into the cluster's document
as a load balancer over its node group, on a network of its own; detached, gone again."""

from __future__ import annotations

from shoal.documents import load_cluster
from shoal.model.catalogs import default_inventory
from shoal.model.members import MemberRef
from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error
from tests.senlin.test_policies import act, document, policy, spec


async def test_loadbalance_policy_type_attach_and_detach(senlin: Senlin) -> None:
    shown = (await senlin.ok("GET", "/policy-types/senlin.policy.loadbalance-1.1"))["policy_type"]
    assert shown["schema"]["pool"]["required"] is True
    await senlin.ok("GET", "/policy-types/senlin.policy.region_placement-1.0")
    await senlin.cluster(size=1)
    body = spec(
        "loadbalance",
        "1.1",
        pool={
            "protocol": "HTTP",
            "protocol_port": 8080,
            "subnet": "private",
            "lb_method": "ROUND_ROBIN",
        },
        vip={"subnet": "private", "protocol": "HTTP", "protocol_port": 80, "address": "10.77.0.10"},
        health_monitor={"type": "HTTP", "delay": 5, "timeout": 3, "max_retries": 2},
    )
    pid = await policy(senlin, "lb", body)
    await act(senlin, "web", {"policy_attach": {"policy_id": pid}})
    doc = await document(senlin, "web")
    (lb,) = load_cluster(_json(doc), default_inventory()).networking.load_balancers
    (pool,) = lb.pools
    assert pool.members == MemberRef(doc["node_groups"][0]["name"])
    assert pool.member_port == 8080 and lb.listeners[0].port == 80
    assert pool.monitor is not None and pool.monitor.max_retries == 2
    assert str(lb.vip_address) == "10.77.0.10"
    await act(senlin, "web", {"policy_detach": {"policy_id": pid}})
    doc = await document(senlin, "web")
    assert "load_balancers" not in doc and "networks" not in doc

    regions = spec("region_placement", regions=[{"name": "RegionOne", "weight": 100}])
    rid = await policy(senlin, "rp", regions)
    await act(senlin, "web", {"policy_attach": {"policy_id": rid}})
    bad = spec("region_placement", regions=[{"weight": 1}])
    r = await senlin.call("POST", "/policies", json={"policy": {"name": "x", "spec": bad}})
    senlin_error(r, 400, "BadRequest")


def _json(doc: object) -> str:
    import json

    return json.dumps(doc)

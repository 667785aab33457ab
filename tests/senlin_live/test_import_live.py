"""Issue 28 end to end with real Senlin 16: Senlin's API and engine make the clusters (servers
booted in the Nova harness through a Keystone trust), Senlin is stopped, Shoal imports its
database, and then: the same server ids and hosts, no Nova create or delete during the import
(Nova's own server list), the clusters readable through Shoal's native API and /clustering with
Senlin's ids, a scale-out and the receiver's old webhook URL working through Shoal, and a
second import changing nothing."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from tests.senlin_live.cloud_ops import connect, done, wait_action
from tests.senlin_live.conftest import LiveCloud
from tests.senlin_live.deployment import make_deployment


def test_senlin_made_clusters_are_imported_in_place(live: LiveCloud) -> None:
    senlin = connect(live.keystone, live.senlin.url)
    made = make_deployment(senlin, live.nova)
    hosts = {sid: host for sid, (_, host, _) in live.nova.servers().items()}

    live.senlin.stop()  # step 1 of docs/senlin.md: nothing acts on the clusters any more
    before = live.nova.servers()
    admin = {"X-Auth-Token": live.keystone.admin_token}
    shoal = httpx.Client(base_url=live.shoal.url, timeout=300)
    body = {"database": live.senlin.db_url, "project": live.keystone.ids["alpha"]}
    r = shoal.post("/v1/imports/senlin", json=body, headers=admin)
    assert r.status_code == 200, r.text
    report = r.json()
    assert live.nova.servers() == before  # Nova: nothing created, deleted, rebuilt or touched

    plans = {c["name"]: c for c in report["clusters"]}
    assert {n: plans[n]["outcome"] for n in plans} == {"web": "import", "db": "import"}
    assert {n: plans[n]["id"] for n in plans} == made.clusters
    adopted = {n["id"]: n for p in plans.values() for n in p["nodes"] if n["adopted"]}
    error = next(n for n in plans["db"]["nodes"] if n["id"] == made.error_node)
    assert not error["adopted"] and "ERROR" in error["why"], error
    assert set(adopted) == set(made.servers) - {made.error_node, made.loner}
    for nid, node in adopted.items():
        assert node["physical_id"] == made.servers[nid]
        assert node["host"] == hosts[made.servers[nid]]
    assert [n["id"] for n in report["standalone_nodes"]] == [made.loner]
    web_policies = {p["name"]: p["mapped"] for p in plans["web"]["policies"]}
    assert web_policies == {"oldest-first": True, "out-by-one": True}
    assert {r["name"]: r["mapped"] for r in plans["web"]["receivers"]} == {"web-out": True}

    # The same ids through Shoal's /clustering (openstacksdk, alice's Keystone token) ...
    conn = connect(live.keystone, f"{live.shoal.url}/clustering")
    web_id = made.clusters["web"]
    web = conn.clustering.get_cluster(web_id)
    assert (web.name, web.status, web.desired_capacity) == ("web", "ACTIVE", 2)
    via_facade = {n.id: n.physical_id for n in conn.clustering.nodes(cluster_id=web_id)}
    assert via_facade == {n: made.servers[n] for n in via_facade} and len(via_facade) == 2
    # ... and its native API.
    token = {"X-Auth-Token": str(conn.session.get_token())}
    native = (
        shoal.get(f"/v1/clusters/{web_id}", params={"nodes": 1000}, headers=token)
        .raise_for_status()
        .json()
    )
    members = {n["id"]: n["host"] for n in native["cluster"]["nodes"]}
    assert members == {n: hosts[made.servers[n]] for n in via_facade}
    for nid in members:
        node = shoal.get(f"/v1/nodes/{nid}", headers=token).raise_for_status().json()["node"]
        assert node["physical_id"] == made.servers[nid]

    # A scale-out through Shoal boots one server in Nova; the old webhook URL still works.
    done(conn, conn.clustering.scale_out_cluster(web_id, 1))
    hook = urlsplit(made.webhook)
    fired = httpx.post(f"{live.shoal.url}{hook.path}?{hook.query}", timeout=120)
    assert fired.status_code == 202, fired.text
    assert wait_action(conn, fired.headers["Location"]).status == "SUCCEEDED"
    after = live.nova.servers()
    new = set(after) - set(before)
    assert len(new) == 2 and set(before) <= set(after)
    assert all(after[s][0] == "ACTIVE" for s in new)
    assert conn.clustering.get_cluster(web_id).desired_capacity == 4

    again = shoal.post("/v1/imports/senlin", json=body, headers=admin)
    assert again.status_code == 200, again.text
    assert {c["name"]: c["outcome"] for c in again.json()["clusters"]} == {
        "web": "unchanged",
        "db": "unchanged",
    }
    assert live.nova.servers() == after

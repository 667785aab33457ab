"""`GET /v1/clusters/{ref}/workloads` (issue 22) on SQLite and PostgreSQL: replicas with node and
ready, ordered by name and paged by `limit`/`after` (`next` until the last page); a limit out
of bounds is a 422 with a pointer before any work; an unknown cluster is a 404. Each
workload's rolling update is on every page (`rollouts`), with the surge replicas running
beside it."""

from __future__ import annotations

from shoal.model.enums import NodeStatus
from shoal.model.workload_rollouts import ContainerRun, ReplicaTemplate, WorkloadPhase
from shoal.store import nodes as node_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.records import NodeChange
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ReplicaRow
from tests.api.conftest import Api

DOC = """
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
workloads:
  api:
    replicas: 5
    containers: [{name: api, image: img, resources: {cpu: 0.1}}]
"""


async def test_replicas_are_listed_a_page_at_a_time(api: Api) -> None:
    cluster = await api.up(DOC)
    rows = [
        ReplicaRow(cluster["id"], f"api-{i}", "api", f"ctl-{1 + i % 2}", i != 3, restarts=i)
        for i in range(1, 6)
    ]
    new = ReplicaTemplate("r2", (ContainerRun("api", "img:2"),))
    old = ReplicaTemplate("r1", (ContainerRun("api", "img"),))
    roll = RolloutRow(
        cluster["id"], "api", WorkloadPhase.ROLLING, new, old, 5.0, 1, ("api-1",), 6.0
    )
    surge = ReplicaRow(cluster["id"], "api-6", "api", "ctl-1", True, revision="r2")
    with api.runtime.db.transaction() as conn:
        replica_repo.save(conn, [*rows, surge], 1.0)
        rollout_repo.save(conn, [roll], 6.0)
    r = await api.call("GET", "/v1/clusters/svc/workloads", params={"limit": 2})
    assert r.status_code == 200, r.text
    first = r.json()
    assert [x["replica"] for x in first["replicas"]] == ["api-1", "api-2"]
    assert first["replicas"][0] == {
        "replica": "api-1",
        "workload": "api",
        "node": "ctl-2",
        "ready": True,
        "restarts": 1,
        "started_at": None,
        "revision": None,
    }
    assert first["rollouts"] == [
        {
            "workload": "api",
            "phase": "ROLLING",
            "revision": "r2",
            "images": ["img:2"],
            "previous_revision": "r1",
            "batches": 1,
            "batch": ["api-1"],
            "batch_started_at": "1970-01-01T00:00:06Z",
            "surge": ["api-6"],
            "max_unavailable": 1,
            "max_surge": 1,
            "reason": None,
            "started_at": "1970-01-01T00:00:05Z",
            "summary": "rolling to r2, batch 1 (api-1), 1 surge",
        }
    ]
    seen = list(first["replicas"])
    after = first["next"]
    while after is not None:
        r = await api.call("GET", "/v1/clusters/svc/workloads", params={"limit": 2, "after": after})
        seen.extend(r.json()["replicas"])
        after = r.json()["next"]
    assert [x["replica"] for x in seen] == [f"api-{i}" for i in range(1, 7)]
    assert [x["ready"] for x in seen] == [True, True, False, True, True, True]

    for bad in (0, 10_001, 10**30):
        r = await api.call("GET", "/v1/clusters/svc/workloads", params={"limit": bad})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["details"][0]["path"] == "query:limit"
    r = await api.call("GET", "/v1/clusters/nope/workloads")
    assert r.status_code == 404, r.text


async def test_a_replica_on_a_node_that_is_gone_is_never_listed(api: Api) -> None:
    """Issue 36: replicas were listed "ready" on nodes that no longer existed. A replica whose
    node has no row, or is deleted or being deleted, is not listed; one on a node that is not
    live reads not ready (whatever its row says, until the keeper moves it)."""
    cluster = await api.up(DOC)
    cid = cluster["id"]
    with api.runtime.db.reading() as conn:
        nodes = {n.name: n for n in node_repo.list_nodes(conn, cid)}
    rows = [
        ReplicaRow(cid, "api-1", "api", "ctl-1", True),
        ReplicaRow(cid, "api-2", "api", "ctl-2", True),
        ReplicaRow(cid, "api-3", "api", "ctl-9", True),  # no such node
    ]
    with api.runtime.db.transaction() as conn:
        replica_repo.save(conn, rows, 1.0)

    async def listed() -> dict[str, bool]:
        r = await api.call("GET", "/v1/clusters/svc/workloads", params={"limit": 1})
        found: dict[str, bool] = {}
        body = r.json()
        while True:  # every page: what is dropped must not shorten a page into a wrong end
            found.update({x["replica"]: x["ready"] for x in body["replicas"]})
            if body["next"] is None:
                return found
            r = await api.call(
                "GET", "/v1/clusters/svc/workloads", params={"limit": 1, "after": body["next"]}
            )
            body = r.json()

    assert await listed() == {"api-1": True, "api-2": True}
    with api.runtime.db.transaction() as conn:
        node_repo.update_nodes(
            conn, [NodeChange(nodes["ctl-2"].id, status=NodeStatus.ERROR, updated_at=2.0)]
        )
    assert await listed() == {"api-1": True, "api-2": False}
    for status in (NodeStatus.DELETING, NodeStatus.DELETED):
        with api.runtime.db.transaction() as conn:
            node_repo.update_nodes(
                conn, [NodeChange(nodes["ctl-2"].id, status=status, updated_at=3.0)]
            )
        assert await listed() == {"api-1": True}

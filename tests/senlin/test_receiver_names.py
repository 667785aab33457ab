"""Senlin receivers as Senlin kept them: names that repeat (a lookup by a shared name is
Senlin's 400), params kept as given, and updates of the action and params."""

from __future__ import annotations

from typing import Any

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error


def _body(cluster_id: str, name: str, action: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "receiver": {
            "name": name,
            "type": "webhook",
            "cluster_id": cluster_id,
            "action": action,
            "params": params,
        }
    }


async def test_receivers_may_share_a_name(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=1)
    made = [
        (await senlin.ok("POST", "/receivers", 201, json=_body(c["id"], "hook", a, {})))["receiver"]
        for a in ("CLUSTER_SCALE_OUT", "CLUSTER_SCALE_IN")
    ]
    assert [m["name"] for m in made] == ["hook", "hook"]
    listed = (await senlin.ok("GET", "/receivers?name=hook"))["receivers"]
    assert sorted(r["id"] for r in listed) == sorted(m["id"] for m in made)
    for method in ("GET", "DELETE"):
        r = await senlin.call(method, "/receivers/hook")
        assert senlin_error(r, 400)["message"] == (
            "Multiple results found matching the query criteria 'hook'. Please be more specific."
        )
    await senlin.ok("DELETE", f"/receivers/{made[0]['id']}", 204)
    assert (await senlin.ok("GET", "/receivers/hook"))["receiver"]["id"] == made[1]["id"]


async def test_update_changes_name_action_and_params(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=2)
    body = _body(c["id"], "r", "CLUSTER_SCALE_OUT", {"count": 5})
    made = (await senlin.ok("POST", "/receivers", 201, json=body))["receiver"]
    url = made["channel"]["alarm_url"]
    change = {"name": "shrink", "action": "CLUSTER_SCALE_IN", "params": {"count": "1"}}
    updated = (await senlin.ok("PATCH", "/receivers/r", json={"receiver": change}))["receiver"]
    assert (updated["id"], updated["name"], updated["action"], updated["params"]) == (
        made["id"],
        "shrink",
        "CLUSTER_SCALE_IN",
        {"count": "1"},
    )
    path = url[url.index("/v1/") :]
    r = await senlin.http.post(f"/clustering{path}")
    assert r.status_code == 202, r.text
    await senlin.wait(r.headers["Location"].rsplit("/", 1)[-1])
    assert (await senlin.ok("GET", f"/clusters/{c['id']}"))["cluster"]["desired_capacity"] == 1
    bad = {"params": {"count": "many"}}
    r = await senlin.call("PATCH", "/receivers/shrink", json={"receiver": bad})
    assert "count" in senlin_error(r, 400)["message"]

"""Webhook receivers: a URL, shown once, that scales the cluster with no token."""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error


async def test_a_webhook_scales_out_without_a_token(senlin: Senlin) -> None:
    cluster = await senlin.cluster(size=1)
    body = {
        "receiver": {
            "name": "grow",
            "type": "webhook",
            "cluster_id": cluster["id"],
            "action": "CLUSTER_SCALE_OUT",
            "params": {"count": 2},
        }
    }
    created = (await senlin.ok("POST", "/receivers", 201, json=body))["receiver"]
    assert (created["action"], created["type"], created["params"]) == (
        "CLUSTER_SCALE_OUT",
        "webhook",
        {"count": 2},
    )
    url = urlsplit(created["channel"]["alarm_url"])
    assert url.path == f"/clustering/v1/webhooks/{created['id']}/trigger"
    assert "V=2" in url.query and "token=" in url.query

    shown = (await senlin.ok("GET", f"/receivers/{created['id']}"))["receiver"]
    assert shown["channel"] == {}, "the secret is shown only once"
    listed = (await senlin.ok("GET", f"/receivers?cluster_id={cluster['id']}"))["receivers"]
    assert [r["id"] for r in listed] == [created["id"]]

    r = await senlin.http.post(f"{url.path}?{url.query}")
    assert r.status_code == 202, r.text
    action = await senlin.wait(r.json()["action"])
    assert (action["action"], action["status"]) == ("CLUSTER_SCALE_OUT", "SUCCEEDED")
    assert (await senlin.ok("GET", "/clusters/web"))["cluster"]["desired_capacity"] == 3

    wrong = await senlin.http.post(f"{url.path}?V=2&token=guess")
    senlin_error(wrong, 404, "ResourceNotFound")
    again = await senlin.http.post(f"{url.path}?{url.query}")
    senlin_error(again, 409, "ActionCooldown")

    await senlin.ok("DELETE", f"/receivers/{created['id']}", 204)
    senlin_error(await senlin.call("GET", f"/receivers/{created['id']}"), 404)


async def test_unsupported_receivers_are_refused(senlin: Senlin) -> None:
    cluster = await senlin.cluster(size=1)
    base = {"name": "r", "cluster_id": cluster["id"]}
    r = await senlin.call(
        "POST",
        "/receivers",
        json={"receiver": {**base, "action": "CLUSTER_SCALE_OUT", "type": "message"}},
    )
    senlin_error(r, 409, "FeatureNotSupported")
    r = await senlin.call(
        "POST", "/receivers", json={"receiver": {**base, "action": "CLUSTER_DELETE"}}
    )
    senlin_error(r, 400, "BadRequest")


async def test_resize_receivers_rename_and_refusals(senlin: Senlin) -> None:
    cluster = await senlin.cluster(size=1)
    body = {
        "receiver": {
            "name": "r1",
            "type": "webhook",
            "cluster_id": cluster["id"],
            "action": "CLUSTER_RESIZE",
            "params": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 1},
        }
    }
    created = (await senlin.ok("POST", "/receivers", 201, json=body))["receiver"]
    assert created["action"] == "CLUSTER_RESIZE" and created["channel"]["alarm_url"]
    listed = await senlin.ok("GET", "/receivers?action=CLUSTER_RESIZE")
    assert [r["id"] for r in listed["receivers"]] == [created["id"]]
    renamed = await senlin.ok(
        "PATCH", f"/receivers/{created['id']}", json={"receiver": {"name": "r2"}}
    )
    assert renamed["receiver"]["name"] == "r2"
    r = await senlin.call("PATCH", "/receivers/nope", json={"receiver": {"name": "x"}})
    senlin_error(r, 404)
    r = await senlin.call("PATCH", f"/receivers/{created['id']}", json={"receiver": {}})
    assert senlin_error(r, 400)["message"] == "No property needs an update."
    other = dict(body["receiver"], cluster_id="nope")
    r = await senlin.call("POST", "/receivers", json={"receiver": other})
    assert senlin_error(r, 400)["message"] == "The specified cluster 'nope' could not be found."
    long = dict(body["receiver"], name="x" * 256)
    senlin_error(await senlin.call("POST", "/receivers", json={"receiver": long}), 400)
    raw = '{"receiver": ' + '{"k": ' * 10_000 + "1" + "}" * 10_000 + "}"
    r = await senlin.call("POST", "/receivers", content=raw.encode())
    assert "nests deeper than" in senlin_error(r, 400)["message"]


async def test_a_resize_webhook_moves_the_bounds_it_names(senlin: Senlin) -> None:
    """A CLUSTER_RESIZE receiver's `min_size` / `max_size` (strings, as Senlin clients send
    them) reach the cluster when it is triggered, then the count moves within the new bounds."""
    cluster = await senlin.cluster(size=1, min_size=0, max_size=2)
    params = {"adjustment_type": "CHANGE_IN_CAPACITY", "number": "3", "min_size": "2"}
    body = {
        "receiver": {
            "name": "grow",
            "type": "webhook",
            "cluster_id": cluster["id"],
            "action": "CLUSTER_RESIZE",
            "params": {**params, "max_size": "5", "strict": "false"},
        }
    }
    created = (await senlin.ok("POST", "/receivers", 201, json=body))["receiver"]
    assert created["params"]["min_size"] == "2", "params are shown as given"
    url = urlsplit(created["channel"]["alarm_url"])
    r = await senlin.http.post(f"{url.path}?{url.query}")
    assert r.status_code == 202, r.text
    action = await senlin.wait(r.json()["action"])
    assert action["status"] == "SUCCEEDED", action
    shown = (await senlin.ok("GET", "/clusters/web"))["cluster"]
    sizes = (shown["min_size"], shown["max_size"], shown["desired_capacity"])
    assert sizes == (2, 5, 4), "bounds moved first, then 1 + 3 nodes within them"

    crossed = dict(body["receiver"], name="bad", params={"min_size": "6", "max_size": "3"})
    r = await senlin.call("POST", "/receivers", json={"receiver": crossed})
    assert "min_size" in senlin_error(r, 400)["message"]
    bad = dict(body["receiver"], name="bad", params={"max_size": "-2"})
    r = await senlin.call("POST", "/receivers", json={"receiver": bad})
    assert "max_size" in senlin_error(r, 400)["message"]

"""The API takes environments with a native document: `{document, environment: [...]}` in the
create, plan and apply bodies; problems point into the request (`/document/...`,
`/environment/N/...`); the stored document is the one the environments produced."""

from __future__ import annotations

import json

from shoal.documents.environment_native import MAX_ENVIRONMENTS
from tests.api.conftest import Api

DOC = {
    "name": "envs",
    "parameters": {"n": {"type": "number", "default": 1}},
    "profiles": {"p": {"type": "server", "flavor": "m1.tiny", "image": "cirros"}},
    "node_groups": [{"name": "web", "profile": "p", "count": {"param": "n"}, "role": "Web"}],
}


async def test_create_with_environments_stores_what_they_produced(api: Api) -> None:
    body = {
        "document": DOC,
        "environment": [{"parameters": {"n": 1}}, {"roles": {"Web": {"count": 2}}}],
    }
    r = await api.call("POST", "/v1/clusters", content=json.dumps(body))
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    r = await api.call("GET", "/v1/clusters/envs")
    assert r.status_code == 200, r.text
    document = r.json()["cluster"]["document"]
    assert [g["count"] for g in document["node_groups"]] == [2]
    assert "parameters" not in document  # concrete: no parameter is left to resolve
    assert len(await api.nodes("envs")) == 2


async def test_problems_point_into_the_request_all_at_once(api: Api) -> None:
    bad_doc = dict(DOC, node_groups=[{"name": "web", "profile": "nope", "count": 1}])
    body = {"document": bad_doc, "environment": [{"parameters": {"zz": 1}}]}
    r = await api.call("POST", "/v1/clusters", content=json.dumps(body))
    assert r.status_code == 422, r.text
    paths = {d["path"] for d in r.json()["error"]["details"]}
    assert "/environment/0/parameters/zz" in paths
    assert "/document/node_groups/0/profile" in paths


async def test_the_number_of_environments_is_limited(api: Api) -> None:
    body = {"document": DOC, "environment": [{}] * (MAX_ENVIRONMENTS + 1)}
    r = await api.call("POST", "/v1/clusters", content=json.dumps(body))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"][0]["path"] == "/environment"


async def test_secrets_are_kept_but_never_shown(api: Api) -> None:
    doc = dict(
        DOC,
        name="secret",
        parameters={"pw": {"type": "string", "hidden": True}},
        software={
            "configs": {"c": {"group": "script", "config": "true", "inputs": ["password"]}},
            "deployments": {
                "d": {"config": "c", "target": "web", "inputs": {"password": {"secret": "pw"}}}
            },
        },
        node_groups=[{"name": "web", "profile": "p", "count": 1}],
    )
    body = {"document": doc, "environment": [{"parameters": {"pw": "hunter2-secret"}}]}
    r = await api.call("POST", "/v1/clusters", content=json.dumps(body))
    assert r.status_code == 202, r.text
    assert "hunter2-secret" not in r.text
    await api.wait(r.json()["action"]["id"])
    r = await api.call("GET", "/v1/clusters/secret")
    assert r.status_code == 200, r.text
    assert "hunter2-secret" not in r.text
    assert r.json()["cluster"]["document"]["parameters"]["pw"]["default"] == "******"

"""A HOT template over the API: Heat's stack-create body to POST /v1/clusters, end to end on
the sim provider (SQLite and PostgreSQL), and a bad template answered 422 with every problem."""

from __future__ import annotations

from pathlib import Path

from shoal.documents.hot import bundle
from shoal.model.catalogs import default_inventory
from tests.api.conftest import Api, api

__all__ = ["api"]

TRIPLEO = Path(__file__).resolve().parents[2] / "data" / "hot" / "tripleo-style"


async def test_post_template_environments_and_files(api: Api) -> None:
    body = bundle(
        TRIPLEO / "overcloud.yaml",
        [TRIPLEO / "common.yaml", TRIPLEO / "ha.yaml"],
        default_inventory(),
        name="overcloud",
    )
    r = await api.call("POST", "/v1/clusters", content=body)
    assert r.status_code == 202, r.text
    assert r.headers["Location"].startswith("/v1/actions/")
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    nodes = await api.nodes("overcloud")
    servers = [n for n in nodes if n["kind"] == "server"]
    assert len(servers) == 5  # 3 controllers (each with its data volume) and 2 computes
    hosts = {n["host"] for n in servers if n["name"].startswith("Controller")}
    assert len(hosts) == 3


async def test_heat_body_with_inline_files(api: Api) -> None:
    body = {
        "stack_name": "web",
        "template": {
            "heat_template_version": "2018-08-31",
            "parameters": {"n": {"type": "number"}},
            "resources": {
                "group": {
                    "type": "OS::Heat::ResourceGroup",
                    "properties": {
                        "count": {"get_param": "n"},
                        "resource_def": {"type": "My::Web"},
                    },
                }
            },
        },
        "environment": {"resource_registry": {"My::Web": "web.yaml"}},
        "files": {
            "web.yaml": "heat_template_version: 2018-08-31\nresources:\n"
            "  s: {type: OS::Nova::Server, properties: {flavor: m1.tiny, image: cirros}}\n"
        },
        "parameters": {"n": 2},
    }
    r = await api.call("POST", "/v1/clusters", json=body)
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    assert sorted(n["name"] for n in await api.nodes("web")) == ["group-1", "group-2"]


async def test_invalid_template_is_422_with_every_problem(api: Api) -> None:
    body = {
        "template": {
            "heat_template_version": "2016-10-14",
            "resources": {
                "a": {
                    "type": "OS::Nova::Server",
                    "properties": {"flavor": "nope", "image": "cirros"},
                },
                "b": {"type": "OS::Zaqar::Queue"},
                "c": {"type": "OS::Nova::Server", "properties": {"image": {"get_param": "x"}}},
            },
        }
    }
    r = await api.call("POST", "/v1/clusters", json=body)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    paths = {d["path"] for d in error["details"]}
    assert {
        "/template/resources/a/properties/flavor",
        "/template/resources/b/type",
        "/template/resources/c/properties",
        "/template/resources/c/properties/image/get_param",
    } <= paths

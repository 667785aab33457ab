"""`OS::Heat::RandomString` as a deployment input: checked as Heat checks it, drawn as Heat
draws it, kept as one of the cluster's secrets, stable across re-reads and updates unless its
properties (e.g. `salt`) change, and never shown."""

from __future__ import annotations

import asyncio
import json
import string
from pathlib import Path
from typing import Any

from shoal.documents.export import to_document
from shoal.documents.hot import read_body
from shoal.documents.hot.load import HotResult
from shoal.documents.hot.randomness import generate
from shoal.documents.hot.shapes import RandomShape
from shoal.documents.loader import cluster_from_tree
from shoal.documents.software_export import redacted
from shoal.model.catalogs import default_inventory
from shoal.model.software import GENERATED_MARK, SecretInput
from shoal.service.edits import replace_document
from shoal.store import clusters as cluster_repo
from tests.api.conftest import Api, api

__all__ = ["api"]

SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.small", "image": "cirros"}}
CORPUS = Path(__file__).resolve().parents[2] / "data" / "hot" / "heat-templates" / "hot"


def template(random: dict[str, object] | None = None, **more: object) -> dict[str, object]:
    return {
        "heat_template_version": "2016-10-14",
        "resources": {
            "db": SERVER,
            "pw": {"type": "OS::Heat::RandomString", "properties": random or {}},
            "cfg": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {"group": "script", "config": "echo hi", "inputs": [{"name": "p"}]},
            },
            "one": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {
                    "config": {"get_resource": "cfg"},
                    "server": {"get_resource": "db"},
                    "input_values": {"p": {"get_attr": ["pw", "value"]}},
                },
            },
            "two": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {
                    "config": {"get_resource": "cfg"},
                    "server": {"get_resource": "db"},
                    "input_values": {"p": {"get_resource": "pw"}},
                },
            },
            **more,
        },
    }


def read(body: dict[str, object]) -> HotResult:
    return read_body(body, default_inventory())


def document(body: dict[str, object]) -> dict[str, Any]:
    """The document a cluster read from `body` is stored as."""
    spec = read(body).spec
    assert spec is not None
    return to_document(spec)


def secret_of(body: dict[str, object]) -> str:
    result = read(body)
    assert result.problems == [], result.problems
    assert result.spec is not None
    return result.spec.software.secrets["pw"]


def test_a_random_string_input_is_a_secret_drawn_once() -> None:
    result = read(template())
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    inputs = {d.name: d.inputs["p"] for d in sw.deployments}
    assert inputs == {"one": SecretInput("pw"), "two": SecretInput("pw")}  # one value, shared
    value = sw.secrets["pw"]
    assert len(value) == 32 and set(value) <= set(string.ascii_letters + string.digits)
    assert sw.generated["pw"].startswith(GENERATED_MARK + " ")
    assert value not in repr(sw) and value not in repr(result.spec)
    assert secret_of(template()) != value  # another cluster, another value


def test_kept_with_the_cluster_and_never_in_views() -> None:
    result = read(template({"length": 20, "salt": "v1"}))
    assert result.spec is not None
    value = result.spec.software.secrets["pw"]
    stored = to_document(result.spec)
    assert stored["parameters"]["pw"]["default"] == value
    assert stored["parameters"]["pw"]["hidden"] is True
    assert value not in json.dumps(redacted(stored))
    # The engine re-reads the stored document (a re-plan): the same value, still marked.
    again = cluster_from_tree(stored, default_inventory())
    assert again.software.secrets["pw"] == value
    assert again.software.generated == result.spec.software.generated
    assert to_document(again) == stored


def test_an_update_keeps_the_value_unless_its_properties_change() -> None:
    first = read(template({"salt": "v1"})).spec
    assert first is not None
    stored = to_document(first)
    kept = replace_document(stored, document(template({"salt": "v1"})))
    assert kept["parameters"]["pw"]["default"] == first.software.secrets["pw"]
    # As in Heat, a new salt (or length, or classes) draws a new value.
    for changed in ({"salt": "v2"}, {"salt": "v1", "length": 31}):
        redrawn = replace_document(stored, document(template(changed)))
        assert redrawn["parameters"]["pw"]["default"] != first.software.secrets["pw"]


def test_drawn_by_heat_rules() -> None:
    shape = RandomShape(
        "pw", "/resources/pw", 12, (("digits", 3), ("uppercase", 2)), (("!@", 4),), "s"
    )
    for _ in range(50):
        value = generate(shape)
        assert len(value) == 12
        assert sum(c in string.digits for c in value) >= 3
        assert sum(c in string.ascii_uppercase for c in value) >= 2
        assert sum(c in "!@" for c in value) >= 4
        assert set(value) <= set(string.digits + string.ascii_uppercase + "!@")
    assert set(generate(RandomShape("h", "", 64, (("hexdigits", 1),)))) <= set(
        string.digits + "ABCDEF"
    )
    # The deprecated `sequence` is one class with a minimum of 1.
    value = secret_of(template({"sequence": "octdigits", "length": 40}))
    assert len(value) == 40 and set(value) <= set(string.octdigits)
    value = secret_of(template({"character_sequences": [{"sequence": "xy"}], "length": 5}))
    assert len(value) == 5 and set(value) <= {"x", "y"}


def test_bad_properties_are_every_problem_at_its_pointer() -> None:
    result = read(
        template(
            {
                "length": 2,
                "character_classes": [{"class": "emoji"}, {"min": 0}, {"class": "digits", "x": 1}],
                "character_sequences": [{"min": 1}],
            }
        )
    )
    at = "/resources/pw/properties"
    assert sorted((p.path, p.message) for p in result.problems) == sorted(
        [
            (f"{at}/character_classes/0/class", result.problems[0].message),
            (f"{at}/character_classes/1/min", "min is a whole number from 1 to 512"),
            (f"{at}/character_classes/2/x", "unknown key 'x'; one of class, min"),
            (f"{at}/character_sequences/0/sequence", "sequence is a non-empty text of characters"),
        ]
    )
    assert result.problems[0].message.startswith("class is one of lettersdigits")
    too_short = read(template({"length": 2, "character_classes": [{"min": 3}]}))
    assert [(p.path, p.message) for p in too_short.problems] == [
        (
            f"{at}/length",
            "length 2 is smaller than the character classes' and sequences' minimums combined",
        )
    ]
    both = read(template({"sequence": "digits", "character_classes": [{"class": "letters"}]}))
    assert [p.path for p in both.problems] == [f"{at}/sequence"]


def test_what_cannot_be_kept_once_per_cluster_is_one_problem_each() -> None:
    # Properties from a resource at run time: the value cannot be drawn now.
    body = template({"length": {"get_attr": ["db", "name"]}})
    result = read(body)
    assert result.spec is None
    assert {u.reason for u in result.unsupported} == {"RandomString known only at run time"}
    # In a group's member Heat draws one per member; Shoal's secret is one per cluster.
    member = {
        "heat_template_version": "2016-10-14",
        "resources": template()["resources"],
    }
    body = {
        "template": {
            "heat_template_version": "2016-10-14",
            "resources": {
                "g": {
                    "type": "OS::Heat::ResourceGroup",
                    "properties": {"count": 2, "resource_def": {"type": "member.yaml"}},
                }
            },
        },
        "files": {"member.yaml": json.dumps(member)},
    }
    result = read(body)
    assert result.spec is None
    assert {u.reason for u in result.unsupported} == {"RandomString in a group member"}


def test_the_wordpress_corpus_template_plans_with_its_passwords_as_secrets() -> None:
    path = CORPUS / "software-config" / "example-templates" / "wordpress"
    tpl = (path / "WordPress_software-config_1-instance.yaml").read_text()
    files = {name: (path / name).read_text() for name in ("wp_install.sh", "db_install.sh")}
    body = {
        "template": tpl,
        "files": files,
        "parameters": {"key_name": "k", "image": "cirros", "flavor": "m1.small"},
    }
    result = read(body)
    assert result.problems == [], result.problems
    assert result.spec is not None
    sw = result.spec.software
    db = sw.deployment("db_deployment")
    assert db is not None
    assert db.inputs["db_rootpassword"] == SecretInput("db_root_password")
    assert db.inputs["db_password"] == SecretInput("db_password")
    assert set(sw.generated) == {"db_root_password", "db_password"}  # db_username: hidden param
    assert sw.secrets["db_password"] != sw.secrets["db_root_password"]


def stored_secret(api: Api, cluster: str) -> str:
    with api.runtime.db.transaction() as conn:
        found = cluster_repo.get_cluster(conn, cluster, None)
    assert found is not None
    value: str = found.document["parameters"]["pw"]["default"]
    return value


async def settled_runs(api: Api, action: str) -> dict[str, dict[str, Any]]:
    """The cluster's deployment rows once both ran `action` to COMPLETE (sim runs them)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60.0
    while True:
        r = await api.call("GET", "/v1/clusters/rs/deployments")
        assert r.status_code == 200, r.text
        rows = {d["deployment"]: d for d in r.json()["deployments"]}
        done = [d for d in rows.values() if d["action"] == action and d["status"] == "COMPLETE"]
        if len(done) == 2:
            return rows
        assert loop.time() < deadline, rows
        await asyncio.sleep(0.02)


async def test_over_the_api_the_value_survives_an_update_and_a_new_salt_redraws_it(
    api: Api,
) -> None:
    async def send(method: str, path: str, salt: str) -> None:
        body = {"stack_name": "rs", "template": template({"salt": salt})}
        r = await api.call(method, path, json=body)
        assert r.status_code == 202, r.text
        assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"

    await send("POST", "/v1/clusters", "v1")
    first = await settled_runs(api, "CREATE")
    value = stored_secret(api, "rs")
    assert len(value) == 32

    await send("PUT", "/v1/clusters/rs", "v1")  # the same template again: nothing to redo
    assert stored_secret(api, "rs") == value
    again = await settled_runs(api, "CREATE")
    assert {k: d["attempts"] for k, d in again.items()} == {
        k: d["attempts"] for k, d in first.items()
    }

    await send("PUT", "/v1/clusters/rs", "v2")  # Heat's way to ask for a new value
    redrawn = stored_secret(api, "rs")
    assert redrawn != value
    await settled_runs(api, "UPDATE")  # the deployments take the new value

    seen = [
        (await api.call("GET", path)).text
        for path in ("/v1/clusters/rs", "/v1/actions?cluster=rs", "/v1/events?cluster=rs")
    ]
    node = (await api.nodes("rs"))[0]["id"]
    seen.append((await api.call("GET", f"/v1/nodes/{node}/deployments/one")).text)
    for text in seen:
        assert value not in text and redrawn not in text

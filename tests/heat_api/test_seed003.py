"""Issue 38 item 2 through Heat's API: seed 003's template created with `single.yaml` as
heatclient sends it (`openstack stack create -t template.yaml -e single.yaml`: files keyed by
absolute file:// URLs, the environment file listed in `environment_files` with its registry
rewritten to those URLs), updated to `ha.yaml` and back (`openstack stack update -e ...`), on
the sim provider; the cluster's controllers follow (1, 3, 1) through the same conversion
`shoal apply` makes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.heat_api.conftest import Heat

SEED = Path(__file__).resolve().parents[2] / "examples" / "seed003"


def _url(p: Path) -> str:
    return f"file://{p}"


def heatclient_body(env_name: str, *, name: str | None = None) -> dict[str, Any]:
    """What heatclient's template_utils makes of the template and one `-e` file."""
    files = {_url(p): p.read_text() for p in sorted(SEED.rglob("*.yaml"))}
    env = yaml.safe_load((SEED / env_name).read_text())
    env["resource_registry"] = {
        k: _url(SEED / v) if str(v).endswith(".yaml") else v
        for k, v in env["resource_registry"].items()
    }
    files[_url(SEED / env_name)] = json.dumps(env)
    body: dict[str, Any] = {
        "template": yaml.safe_load((SEED / "template.yaml").read_text().strip()),
        "files": files,
        "environment": env,
        "environment_files": [_url(SEED / env_name)],
        "parameters": {},
        "disable_rollback": True,
    }
    if name is not None:
        body["stack_name"] = name
    return body


async def _controllers(heat: Heat) -> int:
    r = await heat.http.get("/v1/clusters/seed/nodegroups", headers={"X-Auth-Token": heat.token})
    assert r.status_code == 200, r.text
    return sum(
        int(g["count"]) for g in r.json()["nodegroups"] if g["name"].startswith("Controller")
    )


async def test_seed003_single_to_ha_and_back(heat: Heat) -> None:
    r = await heat.call("POST", "/stacks", json=heatclient_body("single.yaml", name="seed"))
    assert r.status_code == 201, r.text
    href = r.headers["Location"]
    assert (await heat.settled(href))["stack_status"] == "CREATE_COMPLETE"
    assert await _controllers(heat) == 1
    r = await heat.call("PUT", href, json=heatclient_body("ha.yaml"))
    assert r.status_code == 202, r.text
    assert (await heat.settled(href))["stack_status"] == "UPDATE_COMPLETE"
    assert await _controllers(heat) == 3
    r = await heat.call("PUT", href, json=heatclient_body("single.yaml"))
    assert r.status_code == 202, r.text
    assert (await heat.settled(href))["stack_status"] == "UPDATE_COMPLETE"
    assert await _controllers(heat) == 1
    env = await heat.ok("GET", href + "/environment")
    assert env["parameter_defaults"]["ControllerCount"] == 1

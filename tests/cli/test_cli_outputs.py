"""`shoal describe cluster` shows a cluster's outputs, evaluated when asked: a Heat template's
outputs follow `shoal scale`; `-o json` carries them as the API gives them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.support import Shoal

TEMPLATE = """\
heat_template_version: 2016-10-14
resources:
  db:
    type: OS::Nova::Server
    properties: {flavor: m1.small, image: cirros}
  web:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Nova::Server
        properties: {flavor: m1.small, image: cirros}
  vol:
    type: OS::Cinder::Volume
    properties: {size: 1}
outputs:
  web_ips:
    description: the web servers
    value: {list_join: [",", {get_attr: [web, attributes, first_address]}]}
  db_url:
    value:
      str_replace:
        template: postgres://HOST:5432/app
        params: {HOST: {get_attr: [db, first_address]}}
  volume_size:
    value: {get_attr: [vol, size]}
"""


def test_describe_shows_outputs_that_follow_scaling(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "app.yaml"
    doc.write_text(TEMPLATE)
    shoal.ok("up", str(doc))
    cluster = shoal.json("describe", "cluster", "app")
    address = {n["name"]: n["address"] for n in cluster["nodes"]}
    outputs = {o["name"]: o for o in cluster["outputs"]}
    assert set(outputs) == {"web_ips", "db_url"}  # volume_size has no Shoal counterpart
    assert outputs["web_ips"]["value"] == f"{address['web-1']},{address['web-2']}"
    assert outputs["web_ips"]["description"] == "the web servers"
    assert outputs["db_url"] == {
        "name": "db_url",
        "description": "",
        "status": "ready",
        "value": f"postgres://{address['db']}:5432/app",
        "reason": None,
    }
    table = shoal.ok("describe", "cluster", "app").stdout
    assert "outputs" in table
    assert f"postgres://{address['db']}:5432/app" in table

    shoal.ok("scale", "app", "--nodegroup", "web", "--count", "3")
    cluster = shoal.json("describe", "cluster", "app")
    address = {n["name"]: n["address"] for n in cluster["nodes"]}
    (web_ips,) = [o for o in cluster["outputs"] if o["name"] == "web_ips"]
    assert web_ips["value"] == ",".join(address[f"web-{i}"] for i in (1, 2, 3))
    assert json.dumps(web_ips["value"]) in json.dumps(
        shoal.json("describe", "cluster", "app", "-o", "json")
    )


def test_describe_shows_a_pending_output_with_why(shoal: Shoal, tmp_path: Path) -> None:
    doc = tmp_path / "one.yaml"
    doc.write_text(
        "name: one\n"
        "node_groups: [{name: g, profile: {type: server, flavor: m1.small, image: cirros}, "
        "count: 2}]\n"
        "outputs:\n"
        "  single: {value: {member: g}}\n"
    )
    shoal.ok("up", str(doc))
    (single,) = shoal.json("describe", "cluster", "one")["outputs"]
    assert single["status"] == "pending"
    assert single["reason"] == "g has 2 nodes, not one; list them with 'members'"
    table = shoal.ok("describe", "cluster", "one").stdout
    assert "pending" in table and "single" in table  # the reason may fold onto more lines
